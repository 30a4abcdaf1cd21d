// The local hub's request routing (localhub/src/dispatch.cpp): the path is split and
// percent-decoded (parse_route), matched against the route table, and handed to the route with its
// query, headers and body. Runs against an in-process store (localhub_harness.h).
//
// Input: "METHOD TARGET" on the first line, then "name: value" header lines, an empty line, the body.
#include "localhub_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto in = khub_fuzz::text(data, size);
  auto request_line = khub_fuzz::take_line(in);
  auto sp = request_line.find(' ');
  if (sp == std::string_view::npos) return 0;
  std::string method(request_line.substr(0, sp));
  std::string target(request_line.substr(sp + 1));
  if (method != "GET" && method != "HEAD" && method != "POST" && method != "PUT" && method != "DELETE") return 0;
  (void)khub::localhub::parse_route(target);
  httplib::Headers headers;
  khub_fuzz::take_headers(in, [&headers](std::string_view name, std::string_view value) {
    headers.emplace(std::string(name), std::string(value));
  });
  (void)khub_fuzz::serve(method, target, headers, in);
  return 0;
}
