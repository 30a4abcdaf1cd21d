#include "python_repr.h"

#include <cstdint>
#include <cstdio>

namespace khub::variants {
namespace {

std::string hex_escape(char kind, uint32_t value, int width) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\%c%0*x", kind, width, static_cast<unsigned>(value));
  return buf;
}

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 when the bytes are not valid UTF-8.
size_t decode_utf8(std::string_view s, size_t i, uint32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t len = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
  if (len == 0 || b0 > 0xF4 || i + len > s.size()) return 0;
  cp = b0 & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

bool is_unprintable(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0xA0) || cp == 0xAD || (cp >= 0x2000 && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF;
}

}  // namespace

std::string python_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == static_cast<unsigned char>(quote) || c == '\\') out += {'\\', static_cast<char>(c)};
      else if (c == '\t') out += "\\t";
      else if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else if (c < 0x20 || c == 0x7F) out += hex_escape('x', c, 2);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t len = decode_utf8(text, i, cp);
    if (len == 0) {
      out += hex_escape('u', 0xDC00 + c, 4);
      ++i;
    } else if (is_unprintable(cp)) {
      out += cp <= 0xFF ? hex_escape('x', cp, 2) : hex_escape('u', cp, 4);
      i += len;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  out += quote;
  return out;
}

}  // namespace khub::variants
