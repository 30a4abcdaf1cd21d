#pragma once
// Reads JSON objects into structs field by field in document order, producing serde_json's error
// texts ("missing field `x`", "duplicate field `x`", "invalid type: integer `1`, expected a string",
// each followed by " at line L column C") so khub's messages match kernels-data's.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "json_positions.h"
#include "khub/base/error.h"

namespace khub::protocol::detail {

using Json = nlohmann::json;

class SerdeReader {
 public:
  /// `from_reader` = true mimics serde_json::from_reader (file input), whose value and key errors
  /// point one column further than from_slice's.
  explicit SerdeReader(std::string_view text, bool from_reader = false);

  /// nlohmann parse; a syntax error becomes InvalidMetadata with a serde-like message.
  [[nodiscard]] Expected<Json> parse_document();

  using FieldFn = std::function<Status(std::string_view key, const Json& value, const std::string& ptr)>;

  /// Visits the fields of the object at `ptr` in document order. Keys in `known` are passed to
  /// `on_field`; a known key seen twice is a duplicate; unknown keys are skipped unless
  /// `deny_unknown`. Afterwards the first absent key of `required` (in that order) is reported.
  [[nodiscard]] Status read_struct(const Json& value, const std::string& ptr, std::string_view what,
                                   const std::vector<std::string_view>& known,
                                   const std::vector<std::string_view>& required, bool deny_unknown,
                                   const FieldFn& on_field) const;

  [[nodiscard]] Expected<std::string> string(const Json& v, const std::string& ptr) const;
  [[nodiscard]] Expected<std::uint64_t> usize(const Json& v, const std::string& ptr) const;
  [[nodiscard]] Expected<bool> boolean(const Json& v, const std::string& ptr) const;
  [[nodiscard]] Expected<std::vector<std::string>> strings(const Json& v, const std::string& ptr) const;

  /// "invalid type: <found>, expected <what>" at the end of the value.
  [[nodiscard]] Error invalid_type(const Json& v, const std::string& ptr, std::string_view what) const;
  /// Where serde puts an error relative to the value's last character: `Normal` there (from_slice)
  /// or one further (from_reader); `Late` (a validating deserializer that read on) always one
  /// further; `Exact` (enum variants, checked inside the string) always there.
  enum class Shift { Normal, Late, Exact };
  /// `<message>` at the end of the value at `ptr`.
  [[nodiscard]] Error error_at(const std::string& ptr, std::string message, Shift shift = Shift::Normal) const;

 private:
  [[nodiscard]] TextPosition shifted(TextPosition pos, Shift shift = Shift::Normal) const;

  std::string_view text_;
  bool from_reader_ = false;
  JsonPositions positions_;
};

/// serde's description of a JSON value: string "x", integer `1`, floating point `1.5`, boolean `true`,
/// null, sequence, map.
[[nodiscard]] std::string describe_unexpected(const Json& v);

}  // namespace khub::protocol::detail
