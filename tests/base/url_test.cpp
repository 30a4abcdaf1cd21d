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

}  // namespace
}  // namespace khub
