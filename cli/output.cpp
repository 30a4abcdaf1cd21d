// The one renderer of command results: JSON or the command's text form.
#include "output.h"

#include <iostream>

namespace khub::cli {

void print_json(const Json& document) { std::cout << document.dump(2) << '\n'; }

void print_result(bool json, const Json& result, const TextForm& text) {
  if (json) print_json(result);
  else text(std::cout, result);
}

Json error_document(const Error& error) {
  Json e{{"code", to_string(error.code)}, {"message", error.message}};
  if (!error.hint.empty()) e["hint"] = error.hint;
  if (!error.notes.empty()) e["notes"] = error.notes;
  return Json{{"error", std::move(e)}};
}

}  // namespace khub::cli
