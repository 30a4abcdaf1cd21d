#include "khub/http/message.h"

#include "khub/base/text.h"


namespace khub::http {

std::string Response::header(std::string_view name) const {
  auto it = headers.find(ascii_lower(name));
  return it == headers.end() ? std::string() : it->second;
}

}  // namespace khub::http
