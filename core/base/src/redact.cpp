#include "khub/base/redact.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "khub/base/text.h"

namespace khub {
namespace {

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

bool is_secret_name(std::string_view name) {
  const std::string lower = ascii_lower(name);
  static constexpr std::array<std::string_view, 9> kWords = {
      "signature", "token", "credential", "key", "policy", "secret", "auth", "sig", "password"};
  return std::any_of(kWords.begin(), kWords.end(),
                     [&](std::string_view w) { return lower.find(w) != std::string::npos; });
}

// Replaces the values of secret-looking query parameters after a '?'.
std::string redact_query(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  bool in_query = false;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == '\n' || c == '\t' || c == '"' || c == '\'') in_query = false;
    if (c == '?') in_query = true;
    out.push_back(c);
    ++i;
    if (in_query && (c == '?' || c == '&')) {
      std::size_t eq = i;
      while (eq < text.size() && text[eq] != '=' && text[eq] != '&' && text[eq] != ' ') ++eq;
      if (eq < text.size() && text[eq] == '=' && is_secret_name(text.substr(i, eq - i))) {
        out.append(text.substr(i, eq - i + 1));
        out += "***";
        i = eq + 1;
        while (i < text.size() && text[i] != '&' && text[i] != ' ' && text[i] != '\n' && text[i] != '"') ++i;
      }
    }
  }
  return out;
}

// Replaces the userinfo of every "scheme://user:password@host" with "***".
std::string redact_userinfo(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  for (std::size_t scheme = text.find("://"); scheme != std::string_view::npos; scheme = text.find("://", i)) {
    const std::size_t host = scheme + 3;
    const std::size_t end = text.find_first_of("/?# \t\r\n\"'<>", host);
    const std::size_t at = text.rfind('@', end == std::string_view::npos ? text.size() - 1 : end - 1);
    out.append(text.substr(i, host - i));
    i = host;
    if (at != std::string_view::npos && at >= host) {
      out += "***";
      i = at;
    }
  }
  out.append(text.substr(i));
  return out;
}

}  // namespace

std::string one_printable_line(std::string_view text, std::size_t max_chars) {
  std::string out(text.substr(0, max_chars));
  for (auto& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';  // line breaks, tabs, ESC (terminal control) and the like
  }
  return out;
}

std::string redact(std::string_view text) {
  std::string s = redact_query(redact_userinfo(text));
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    bool boundary = i == 0 || !is_token_char(s[i - 1]);
    if (boundary && s.compare(i, 3, "hf_") == 0) {
      std::size_t j = i + 3;
      while (j < s.size() && is_token_char(s[j])) ++j;
      if (j - i > 6) {
        out += "hf_***";
        i = j;
        continue;
      }
    }
    if (s.compare(i, 7, "Bearer ") == 0) {
      out += "Bearer ***";
      i += 7;
      while (i < s.size() && is_token_char(s[i])) ++i;
      continue;
    }
    out.push_back(s[i++]);
  }
  return out;
}

std::string server_text_line(std::string_view body) {
  std::size_t start = body.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return {};
  const std::string head = ascii_lower(body.substr(start, 64));
  if (head.starts_with("<!doctype html") || head.starts_with("<html") || head.starts_with("<?xml") ||
      head.starts_with("<head") || head.starts_with("<body"))
    return "an HTML page, not a Hub API answer (is HF_ENDPOINT a Hugging Face Hub?)";
  return redact(one_printable_line(body.substr(start), 200));
}

}  // namespace khub
