#include "khub/base/url.h"

#include <cctype>

namespace khub {

std::string percent_encode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.' || c == '_' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

bool is_valid_repo_name(std::string_view n) {
  if (n.empty() || n.size() > 96) return false;
  for (char c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  if (n.front() == '.' || n.front() == '-' || n.back() == '.' || n.back() == '-') return false;
  return n.find("--") == std::string_view::npos && n.find("..") == std::string_view::npos;
}

bool is_valid_ref_name(std::string_view n) {
  if (n.empty() || n.size() > 200 || n.starts_with("refs/") || n.front() == '/' || n.back() == '/' ||
      n.back() == '.' || n.ends_with(".lock") || n.find("..") != std::string_view::npos ||
      n.find("//") != std::string_view::npos || n.find("@{") != std::string_view::npos) {
    return false;
  }
  for (unsigned char c : n) {
    if (c < 0x21 || c == 0x7f || c == '~' || c == '^' || c == ':' || c == '?' || c == '*' || c == '[' || c == '\\') {
      return false;
    }
  }
  return true;
}

}  // namespace khub
