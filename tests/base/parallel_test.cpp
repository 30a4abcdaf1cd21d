#include "khub/base/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>

namespace khub {
namespace {

TEST(RunParallel, RunsEveryJobOnce) {
  std::mutex m;
  std::multiset<std::size_t> seen;
  ASSERT_TRUE(run_parallel(100, 4, [&](std::size_t i) -> Status {
    std::lock_guard<std::mutex> lock(m);
    seen.insert(i);
    return {};
  }));
  ASSERT_EQ(seen.size(), 100u);
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(seen.count(i), 1u);
  EXPECT_TRUE(run_parallel(0, 4, [](std::size_t) -> Status { return Error(ErrorCode::Io, "never"); }));
}

TEST(RunParallel, StopsAfterTheFirstFailureAndReturnsIt) {
  std::atomic<int> started{0};
  auto st = run_parallel(1000, 1, [&](std::size_t i) -> Status {
    ++started;
    if (i == 3) return Error(ErrorCode::Integrity, "job 3");
    return {};
  });
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "job 3");
  EXPECT_EQ(started.load(), 4) << "one thread: nothing after the failing job starts";
  started = 0;
  st = run_parallel(1000, 3, [&](std::size_t) -> Status {
    ++started;
    return Error(ErrorCode::Network, "all fail");
  });
  ASSERT_FALSE(st);
  EXPECT_LE(started.load(), 3) << "each thread stops at its first failure";
}

}  // namespace
}  // namespace khub
