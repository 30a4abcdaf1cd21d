// Secrets never reach a message, and server text reaches the terminal as one plain line.
#include "khub/base/redact.h"

#include <gtest/gtest.h>

namespace khub {
namespace {

TEST(Redact, TokensAndSignedUrls) {
  EXPECT_EQ(redact("token hf_abcdefghijklmnop used"), "token hf_*** used");
  EXPECT_EQ(redact("Authorization: Bearer eyJhbGciOi.x"), "Authorization: Bearer ***");
  EXPECT_EQ(redact("https://cdn/x?X-Amz-Signature=abc&X-Amz-Date=1&token=zz"),
            "https://cdn/x?X-Amz-Signature=***&X-Amz-Date=1&token=***");
  EXPECT_EQ(redact("https://h/a?recursive=true"), "https://h/a?recursive=true");
}

// Server text in an error: one line, redacted, and an HTML page (a web server that is no Hub)
// named instead of dumped.
TEST(Redact, ServerTextIsOneLine) {
  EXPECT_EQ(server_text_line("  \n<!DOCTYPE HTML>\n<html><head><title>Error response</title>"),
            "an HTML page, not a Hub API answer (is HF_ENDPOINT a Hugging Face Hub?)");
  EXPECT_EQ(server_text_line("<HTML><body>x</body></HTML>").rfind("an HTML page", 0), 0u);
  EXPECT_EQ(server_text_line("Bad gateway\r\nretry with hf_abcdefghijklmnop"), "Bad gateway  retry with hf_***");
  EXPECT_EQ(server_text_line(std::string(500, 'x')).size(), 200u);
  EXPECT_EQ(server_text_line(" \n "), "");
}

TEST(Redact, UrlUserinfo) {
  EXPECT_EQ(redact("GET http://user:pa55@hub.example:8080/api/x failed"), "GET http://***@hub.example:8080/api/x failed");
  EXPECT_EQ(redact("https://tok@h/x and https://h/y?a=b@c"), "https://***@h/x and https://h/y?a=b@c");
  EXPECT_EQ(redact("mail me@example.com at http://h/"), "mail me@example.com at http://h/");
  EXPECT_EQ(redact("http://a:b@"), "http://***@");
}

TEST(Redact, ServerTextHasNoControlCharacters) {
  const std::string hostile = "denied\x1b]0;pwned\x07\x1b[2J\r\nPassword:\x7f";
  const std::string line = server_text_line(hostile);
  for (unsigned char c : line) EXPECT_FALSE(c < 0x20 || c == 0x7f) << "control byte " << int(c) << " in: " << line;
  EXPECT_EQ(one_printable_line("a\x1b[31mb", 200), "a [31mb");
  EXPECT_EQ(one_printable_line(std::string(1000, 'x'), 300).size(), 300u);
  EXPECT_EQ(one_printable_line("caf\xc3\xa9"), "caf\xc3\xa9") << "UTF-8 text stays";
}

}  // namespace
}  // namespace khub
