#include "khub/xet/connection.h"

#include <gtest/gtest.h>

namespace khub::xet {
namespace {

TEST(XetConnection, JsonBodyFirstThenHeaders) {
  auto c = parse_cas_connection(R"({"accessToken":"xet_a","exp":1848535668,"casUrl":"https://cas.example/"})", "", "",
                                "");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->cas_url, "https://cas.example");
  EXPECT_EQ(c->access_token, "xet_a");
  EXPECT_EQ(c->expires, 1848535668u);
  EXPECT_FALSE(c->expiring(1848535668u - 31));
  EXPECT_TRUE(c->expiring(1848535668u - 30));

  c = parse_cas_connection("not json", "http://127.0.0.1:9/cas", "xet_b", "1700000000");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->cas_url, "http://127.0.0.1:9/cas");
  EXPECT_EQ(c->access_token, "xet_b");
  EXPECT_EQ(c->expires, 1700000000u);
}

TEST(XetConnection, IncompleteOrForeignAnswersAreRefused) {
  EXPECT_FALSE(parse_cas_connection("{}", "", "", ""));
  EXPECT_FALSE(parse_cas_connection(R"({"accessToken":"t","exp":-5,"casUrl":"https://c"})", "", "", ""));
  EXPECT_FALSE(parse_cas_connection(R"({"accessToken":"t","exp":5,"casUrl":"file:///etc"})", "", "", ""));
  EXPECT_FALSE(parse_cas_connection("", "https://c", "t", "soon"));
}

}  // namespace
}  // namespace khub::xet
