#pragma once
// Where each value of a JSON text ends, keyed by JSON pointer, so parse errors can say
// "at line L column C" the way serde_json does (the position of the value's last character; for an
// object, its closing brace). Also records the keys of each object in document order.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace khub::protocol::detail {

struct TextPosition {
  int line = 1;
  int column = 0;
};

struct KeyEntry {
  std::string key;
  TextPosition key_end;  // closing quote of the key
};

struct JsonPositions {
  std::map<std::string, TextPosition> value_end;       // "" = root, "/backend", "/archs/0"
  std::map<std::string, std::vector<KeyEntry>> keys;   // object pointer -> keys in order

  [[nodiscard]] TextPosition end_of(const std::string& pointer) const;
};

/// Scans syntactically valid JSON (check with nlohmann first). Keys are not unescaped beyond the
/// common escapes; pointers escape `~` and `/` as RFC 6901 does.
[[nodiscard]] JsonPositions scan_json_positions(std::string_view text);

/// " at line L column C".
[[nodiscard]] std::string at(TextPosition pos);

/// Joins a pointer and a key with RFC 6901 escaping.
[[nodiscard]] std::string child_pointer(const std::string& parent, std::string_view key);

}  // namespace khub::protocol::detail
