#include "khub/base/text.h"

#include <gtest/gtest.h>

namespace khub {
namespace {

// Sizes and numbers from servers and clients: digits only, the whole text, within 64 bits.
TEST(Text, ParseDecimalU64TakesWholeDigitStringsWithin64Bits) {
  EXPECT_EQ(parse_decimal_u64("0"), 0u);
  EXPECT_EQ(parse_decimal_u64("007"), 7u);
  EXPECT_EQ(parse_decimal_u64("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"", "18446744073709551616", "99999999999999999999999", "+1", "-1", " 1", "1 ", "1abc",
                          "0x10", "1.5", "١"}) {
    EXPECT_FALSE(parse_decimal_u64(bad)) << '"' << bad << '"';
  }
}

}  // namespace
}  // namespace khub
