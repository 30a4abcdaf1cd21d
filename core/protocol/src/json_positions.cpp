#include "json_positions.h"

#include <cctype>

namespace khub::protocol::detail {
namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  JsonPositions run() {
    skip_ws();
    value("");
    return std::move(out_);
  }

 private:
  char peek() const { return i_ < text_.size() ? text_[i_] : '\0'; }
  void advance() {
    if (i_ >= text_.size()) return;
    if (text_[i_] == '\n') {
      ++pos_.line;
      pos_.column = 0;
    } else {
      ++pos_.column;
    }
    ++i_;
  }
  void skip_ws() {
    while (i_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[i_]))) advance();
  }

  std::string string_token() {
    std::string s;
    advance();  // opening quote
    while (i_ < text_.size() && peek() != '"') {
      if (peek() == '\\') {
        advance();
        char e = peek();
        switch (e) {
          case 'n': s.push_back('\n'); break;
          case 't': s.push_back('\t'); break;
          case 'r': s.push_back('\r'); break;
          case 'b': s.push_back('\b'); break;
          case 'f': s.push_back('\f'); break;
          default: s.push_back(e); break;  // \" \\ \/ and \u (kept raw; keys never need it)
        }
        advance();
        continue;
      }
      s.push_back(peek());
      advance();
    }
    advance();  // closing quote: pos_ now points at it
    return s;
  }

  void value(const std::string& ptr) {
    char c = peek();
    if (c == '{') {
      advance();
      skip_ws();
      auto& keys = out_.keys[ptr];
      while (peek() != '}' && i_ < text_.size()) {
        std::string key = string_token();
        keys.push_back({key, pos_});
        skip_ws();
        advance();  // ':'
        skip_ws();
        value(child_pointer(ptr, key));
        skip_ws();
        if (peek() == ',') {
          advance();
          skip_ws();
        }
      }
      advance();
    } else if (c == '[') {
      advance();
      skip_ws();
      int index = 0;
      while (peek() != ']' && i_ < text_.size()) {
        value(ptr + "/" + std::to_string(index++));
        skip_ws();
        if (peek() == ',') {
          advance();
          skip_ws();
        }
      }
      advance();
    } else if (c == '"') {
      string_token();
    } else {
      // number, true, false, null: stop on the last character of the token
      while (i_ + 1 < text_.size()) {
        char n = text_[i_ + 1];
        if (n == ',' || n == '}' || n == ']' || std::isspace(static_cast<unsigned char>(n))) break;
        advance();
      }
      advance();
    }
    out_.value_end[ptr] = pos_;
  }

  std::string_view text_;
  std::size_t i_ = 0;
  TextPosition pos_;
  JsonPositions out_;
};

}  // namespace

TextPosition JsonPositions::end_of(const std::string& pointer) const {
  auto it = value_end.find(pointer);
  return it == value_end.end() ? TextPosition{} : it->second;
}

JsonPositions scan_json_positions(std::string_view text) { return Scanner(text).run(); }

std::string at(TextPosition pos) {
  return " at line " + std::to_string(pos.line) + " column " + std::to_string(pos.column);
}

std::string child_pointer(const std::string& parent, std::string_view key) {
  std::string out = parent + "/";
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace khub::protocol::detail
