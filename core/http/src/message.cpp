#include "khub/http/message.h"

#include <algorithm>
#include <cctype>

namespace khub::http {

std::string Response::header(std::string_view name) const {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  auto it = headers.find(lower);
  return it == headers.end() ? std::string() : it->second;
}

}  // namespace khub::http
