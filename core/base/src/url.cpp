#include "khub/base/url.h"

#include <algorithm>
#include <cctype>

#include "khub/base/text.h"

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

bool has_scheme(std::string_view url) {
  auto colon = url.find("://");
  if (colon == std::string_view::npos || colon == 0 || !std::isalpha(static_cast<unsigned char>(url[0]))) return false;
  return std::all_of(url.begin(), url.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
}

bool is_http_url(std::string_view url) {
  const std::string head = ascii_lower(url.substr(0, 8));
  return head.starts_with("http://") || head.starts_with("https://");
}

std::string url_origin(std::string_view url) {
  if (!has_scheme(url)) return {};
  auto scheme = url.find("://");
  auto end = url.find_first_of("/?#", scheme + 3);
  return ascii_lower(url.substr(0, end));
}

std::string join_url(std::string_view base, std::string_view location) {
  if (has_scheme(location)) return std::string(location);
  auto scheme = base.find("://");
  if (location.rfind("//", 0) == 0) return std::string(base.substr(0, scheme + 1)) + std::string(location);
  std::string origin(base.substr(0, base.find('/', scheme + 3)));
  if (!location.empty() && location.front() == '/') return origin + std::string(location);
  std::string b(base.substr(0, base.find('?')));
  return b.substr(0, b.rfind('/') + 1) + std::string(location);
}

}  // namespace khub
