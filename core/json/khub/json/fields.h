#pragma once
// Reads of untrusted JSON (bundles, log entries, trust roots) that never throw: a field that is
// missing or of another type reads as absent (empty object, array or string), and the caller's own
// check then names it. nlohmann's value() and operator[] throw or assert on such input instead.
#include <string>

#include <nlohmann/json.hpp>

namespace khub::json_fields {

using Json = nlohmann::json;

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
