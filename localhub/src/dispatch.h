#pragma once
// Maps a request (method + decoded path segments) to its route handler. The route table reads
// as the Hub API; anything else answers 404 NotFound / 405 MethodNotAllowed.
#include "routes.h"

namespace khub::localhub {

void dispatch_read(Hub& hub, const Req& req, Res& res);
void dispatch_write(Hub& hub, const Req& req, Res& res, const Reader& reader);

}  // namespace khub::localhub
