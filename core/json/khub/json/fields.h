#pragma once
// Reads of untrusted JSON (bundles, log entries, trust roots) that never throw: a field that is
// missing or of another type reads as absent (empty object, array or string), and the caller's own
// check then names it. nlohmann's value() and operator[] throw or assert on such input instead.
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace khub::json_fields {

using Json = nlohmann::json;

/// Deepest nesting khub reads from untrusted JSON: serde_json's default (kernels-data's parser), far
/// above any real document, far below what recursive code can survive.
inline constexpr std::size_t kMaxDepth = 128;

/// The nesting depth of JSON text (brackets outside strings), counted in one pass without recursion.
inline std::size_t nesting_depth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

/// Parses untrusted text: a discarded value (is_discarded()) when it is not JSON or nests deeper than
/// `max_depth`, so no recursive walk over the result can exhaust the stack.
template <class J = Json>
J parse_untrusted(std::string_view text, std::size_t max_depth = kMaxDepth) {
  if (nesting_depth(text) > max_depth) return J(J::value_t::discarded);
  return J::parse(text, nullptr, false);
}

inline const Json& field(const Json& j, const char* key) {
  static const Json absent;
  if (!j.is_object()) return absent;
  auto it = j.find(key);
  return it == j.end() ? absent : *it;
}

inline const Json& object(const Json& j, const char* key) {
  static const Json empty = Json::object();
  const Json& f = field(j, key);
  return f.is_object() ? f : empty;
}

inline const Json& array(const Json& j, const char* key) {
  static const Json empty = Json::array();
  const Json& f = field(j, key);
  return f.is_array() ? f : empty;
}

inline std::string text(const Json& j, const char* key) {
  const Json& f = field(j, key);
  return f.is_string() ? f.get<std::string>() : std::string();
}

}  // namespace khub::json_fields
