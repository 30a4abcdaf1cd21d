#include "card_metadata.h"

#include <set>

namespace khub::localhub {

namespace {
constexpr std::string_view kEmpty =
    "Empty or missing yaml metadata in repo card (https://huggingface.co/docs/hub/model-cards#model-card-metadata)";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Splits off the next line of `text` (without its '\n').
std::string_view next_line(std::string_view& text) {
  auto nl = text.find('\n');
  auto line = text.substr(0, nl);
  text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// A top-level key and what follows it.
struct Entry {
  std::string key;
  std::string_view inline_value;
  bool has_block = false;    // indented or "- " lines follow
  bool block_is_list = false;  // … and the first starts with "-"
};
}  // namespace

CardCheck check_card_metadata(std::string_view readme) {
  CardCheck out;
  std::string_view rest = readme;
  std::string_view first = next_line(rest);
  int line_no = 1;
  while (trim(first).empty() && !rest.empty()) {  // blank lines may come before the block, as on the Hub
    first = next_line(rest);
    ++line_no;
  }
  if (first != "---") {
    out.warnings.emplace_back(kEmpty);
    return out;
  }
  std::vector<Entry> entries;
  std::set<std::string> seen;
  bool closed = false;
  while (!rest.empty()) {
    ++line_no;
    auto line = next_line(rest);
    if (line == "---") {
      closed = true;
      break;
    }
    auto body = trim(line);
    if (body.empty() || body.front() == '#') continue;
    const auto where = "line " + std::to_string(line_no) + " of the metadata";
    if (auto indent_end = line.find_first_not_of(' '); line[indent_end] == '\t') {  // body is not empty
      out.errors.push_back(where + ": a tab in the indentation (YAML indents with spaces)");
      continue;
    }
    if (line.front() == ' ' || line.starts_with("- ") || line == "-") {
      if (entries.empty()) {
        out.errors.push_back(where + ": indented text before any key");
        continue;
      }
      if (!entries.back().has_block) entries.back().block_is_list = body.front() == '-';
      entries.back().has_block = true;
      continue;
    }
    auto colon = line.find(": ");
    if (colon == std::string_view::npos && line.back() == ':') colon = line.size() - 1;
    if (colon == std::string_view::npos || colon == 0) {
      out.errors.push_back(where + ": expected `key: value`, got '" + std::string(line.substr(0, 80)) + "'");
      continue;
    }
    Entry e{std::string(trim(line.substr(0, colon))), trim(line.substr(colon + 1))};
    if (!seen.insert(e.key).second) out.errors.push_back(where + ": duplicate key \"" + e.key + "\"");
    entries.push_back(std::move(e));
  }
  if (!closed) {
    out.errors.emplace_back("the metadata block opened by '---' is never closed");
    return out;
  }
  for (const auto& e : entries) {
    if (e.key != "model-index") continue;
    bool is_list = e.inline_value.empty() ? e.has_block && e.block_is_list : e.inline_value.front() == '[';
    if (!is_list) out.errors.emplace_back("\"model-index\" must be an array");
  }
  if (entries.empty() && out.errors.empty()) out.warnings.emplace_back(kEmpty);
  return out;
}

}  // namespace khub::localhub
