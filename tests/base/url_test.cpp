#include "khub/base/url.h"

#include <gtest/gtest.h>

namespace khub {
namespace {

TEST(Url, PercentEncodeKeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(percent_encode("refs/pr/1"), "refs%2Fpr%2F1");
  EXPECT_EQ(percent_encode("build/torch212 x/a.so", true), "build/torch212%20x/a.so");
  EXPECT_EQ(percent_encode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(percent_encode("é%?#"), "%C3%A9%25%3F%23");
  EXPECT_EQ(percent_encode(std::string_view("\0\xff", 2)), "%00%FF");
  EXPECT_EQ(percent_encode(""), "");
}

TEST(Url, ASchemeCountsOnlyAtTheStart) {
  EXPECT_TRUE(has_scheme("https://hub.example/x"));
  EXPECT_TRUE(has_scheme("git+ssh://h/x"));
  EXPECT_FALSE(has_scheme("/a?next=http://evil.example/"));
  EXPECT_FALSE(has_scheme("://x"));
  EXPECT_FALSE(has_scheme("1http://x"));
  EXPECT_EQ(url_origin("/a?next=http://evil.example/"), "");
  EXPECT_EQ(url_origin("HTTPS://Hub.Example:8080/x?y"), "https://hub.example:8080");
  EXPECT_EQ(join_url("https://hub.example/api/x", "/a?next=http://evil.example/y"),
            "https://hub.example/a?next=http://evil.example/y");
  EXPECT_EQ(join_url("https://hub.example/api/x", "https://cdn.example/b"), "https://cdn.example/b");
  EXPECT_EQ(join_url("https://hub.example/api/x?q=1", "y"), "https://hub.example/api/y");
  EXPECT_TRUE(is_http_url("HTTPS://x"));
  EXPECT_FALSE(is_http_url("file:///etc/passwd"));
}

}  // namespace
}  // namespace khub
