#include "serde_reader.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "khub/json/fields.h"

namespace khub::protocol::detail {

std::string describe_unexpected(const Json& v) {
  switch (v.type()) {
    case Json::value_t::string: return "string " + Json(v.get<std::string>()).dump();
    case Json::value_t::number_unsigned:
    case Json::value_t::number_integer: return "integer `" + v.dump() + "`";
    case Json::value_t::number_float: return "floating point `" + v.dump() + "`";
    case Json::value_t::boolean: return std::string("boolean `") + (v.get<bool>() ? "true" : "false") + "`";
    case Json::value_t::null: return "null";
    case Json::value_t::array: return "sequence";
    case Json::value_t::object: return "map";
    default: return "value";
  }
}

SerdeReader::SerdeReader(std::string_view text, bool from_reader) : text_(text), from_reader_(from_reader) {}

TextPosition SerdeReader::shifted(TextPosition pos, Shift shift) const {
  if (shift == Shift::Late || (shift == Shift::Normal && from_reader_)) ++pos.column;
  return pos;
}

Expected<Json> SerdeReader::parse_document() {
  std::string_view trimmed = text_;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) trimmed.remove_suffix(1);
  if (trimmed.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error(ErrorCode::InvalidMetadata, "EOF while parsing a value at line 1 column 0");
  }
  if (json_fields::nesting_depth(text_) > json_fields::kMaxDepth) {
    // serde_json's limit and wording; nothing recursive below ever sees a deeper document.
    return Error(ErrorCode::InvalidMetadata,
                 "recursion limit exceeded: JSON nested deeper than " + std::to_string(json_fields::kMaxDepth) + " levels");
  }
  Json doc;
  try {
    doc = Json::parse(text_);
  } catch (const Json::parse_error& e) {
    // nlohmann's wording is not serde's; keep its reason and give the byte offset.
    std::string what = e.what();
    auto colon = what.rfind(": ");
    return Error(ErrorCode::InvalidMetadata, "invalid JSON: " +
                                                 (colon == std::string::npos ? what : what.substr(colon + 2)) +
                                                 " at byte " + std::to_string(e.byte));
  } catch (const Json::exception& e) {
    // A number beyond double ("1e400") throws out_of_range, not parse_error; serde_json says
    // "number out of range". Uncaught, it ended the process in std::terminate.
    std::string what = e.what();
    auto tag = what.find("] ");
    return Error(ErrorCode::InvalidMetadata,
                 "invalid JSON: number out of range (" + (tag == std::string::npos ? what : what.substr(tag + 2)) + ")");
  }
  positions_ = scan_json_positions(text_);
  return doc;
}

Error SerdeReader::error_at(const std::string& ptr, std::string message, Shift shift) const {
  return Error(ErrorCode::InvalidMetadata, std::move(message) + at(shifted(positions_.end_of(ptr), shift)));
}

Error SerdeReader::invalid_type(const Json& v, const std::string& ptr, std::string_view what) const {
  return error_at(ptr, "invalid type: " + describe_unexpected(v) + ", expected " + std::string(what));
}

Status SerdeReader::read_struct(const Json& value, const std::string& ptr, std::string_view what,
                                const std::vector<std::string_view>& known,
                                const std::vector<std::string_view>& required, bool deny_unknown,
                                const FieldFn& on_field) const {
  if (!value.is_object()) return invalid_type(value, ptr, what);
  std::set<std::string, std::less<>> seen;
  auto it = positions_.keys.find(ptr);
  if (it != positions_.keys.end()) {
    std::map<std::string, int, std::less<>> occurrences;
    for (const auto& entry : it->second) ++occurrences[entry.key];
    for (const auto& entry : it->second) {
      bool is_known = std::find(known.begin(), known.end(), entry.key) != known.end();
      if (!is_known) {
        if (!deny_unknown) continue;
        std::string expected;
        for (std::size_t i = 0; i < known.size(); ++i) {
          if (i > 0) expected += (known.size() == 2 ? " or " : ", ");
          expected += "`" + std::string(known[i]) + "`";
        }
        std::string lead = known.size() > 2 ? "expected one of " : "expected ";
        return Error(ErrorCode::InvalidMetadata,
                     "unknown field `" + entry.key + "`, " + lead + expected + at(shifted(entry.key_end)));
      }
      if (!seen.insert(entry.key).second) {
        return Error(ErrorCode::InvalidMetadata, "duplicate field `" + entry.key + "`" + at(shifted(entry.key_end)));
      }
      // The DOM keeps only the last of duplicated keys, so the first occurrence cannot be checked;
      // the duplicate itself is reported at the second.
      if (occurrences[entry.key] > 1) continue;
      KHUB_CHECK(on_field(entry.key, value.at(entry.key), child_pointer(ptr, entry.key)));
    }
  }
  for (auto key : required) {
    if (!seen.contains(key)) {
      return Error(ErrorCode::InvalidMetadata,
                   "missing field `" + std::string(key) + "`" + at(positions_.end_of(ptr)));
    }
  }
  return {};
}

Expected<std::string> SerdeReader::string(const Json& v, const std::string& ptr) const {
  if (!v.is_string()) return invalid_type(v, ptr, "a string");
  return v.get<std::string>();
}

Expected<std::uint64_t> SerdeReader::usize(const Json& v, const std::string& ptr) const {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) return error_at(ptr, "invalid value: integer `" + v.dump() + "`, expected usize");
  return invalid_type(v, ptr, "usize");
}

Expected<bool> SerdeReader::boolean(const Json& v, const std::string& ptr) const {
  if (!v.is_boolean()) return invalid_type(v, ptr, "a boolean");
  return v.get<bool>();
}

Expected<std::vector<std::string>> SerdeReader::strings(const Json& v, const std::string& ptr) const {
  if (!v.is_array()) return invalid_type(v, ptr, "a sequence");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    KHUB_TRY(auto s, string(v[i], ptr + "/" + std::to_string(i)));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace khub::protocol::detail
