#include "khub/base/error.h"

#include <gtest/gtest.h>

namespace khub {
namespace {

Expected<int> parse_positive(int v) {
  if (v <= 0) return Error(ErrorCode::InvalidArgument, "value " + std::to_string(v) + " is not positive");
  return v;
}

Expected<int> doubled(int v) {
  KHUB_TRY(int x, parse_positive(v));
  return 2 * x;
}

Status check_positive(int v) {
  KHUB_CHECK(doubled(v).has_value() ? Status{} : Status{doubled(v).error()});
  return {};
}

TEST(Error, ExpectedCarriesValueOrError) {
  auto ok = doubled(4);
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 8);
  auto bad = doubled(-1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::InvalidArgument);
  EXPECT_EQ(bad.error().message, "value -1 is not positive");
  EXPECT_TRUE(check_positive(3));
  EXPECT_FALSE(check_positive(0));
}

TEST(Error, DescribeIsOneLineWithTheHintThenNotes) {
  Error e(ErrorCode::Integrity, "build/x/_a.abi3.so: sha256 mismatch", "run `khub download` again");
  EXPECT_EQ(e.describe(), "build/x/_a.abi3.so: sha256 mismatch; run `khub download` again");
  e.note("expected 3f2a, got 77b1");
  EXPECT_EQ(e.describe(), "build/x/_a.abi3.so: sha256 mismatch; run `khub download` again\n  note: expected 3f2a, got 77b1");
  // Upstream's messages are sentences: the hint starts a new one.
  EXPECT_EQ(Error(ErrorCode::OfflineMiss, "Not in the cache.", "download it first").describe(),
            "Not in the cache. Download it first");
  EXPECT_EQ(to_string(ErrorCode::NoVariant), "NoVariant");
}

}  // namespace
}  // namespace khub
