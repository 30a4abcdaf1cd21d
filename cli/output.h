#pragma once
// How every command prints its result: it builds one JSON document and names its text form; one
// function prints the document (--json) or the text. Errors go through report_error (command.h),
// which prints the error document under --json.
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <ostream>

#include "khub/base/error.h"

namespace khub::cli {

using Json = nlohmann::ordered_json;

/// A command's text form: writes the result to `out` (std::cout); lines for stderr go to std::cerr.
using TextForm = std::function<void(std::ostream& out, const Json& result)>;

/// Prints `result` as JSON (two-space indent, one newline) when `json`, else through `text`.
void print_result(bool json, const Json& result, const TextForm& text);

/// Prints `document` as JSON on stdout (two-space indent, one newline).
void print_json(const Json& document);

/// {"error": {"code", "message", "hint" (when set), "notes" (when any)}}.
[[nodiscard]] Json error_document(const Error& error);

/// The value, or null.
template <typename T>
[[nodiscard]] Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

}  // namespace khub::cli
