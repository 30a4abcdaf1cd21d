// FastDiv (khub_kernels/types.h): the multiply-high division the RoPE token kernels can take
// instead of a division sequence, checked against n / d on the host with the device's arithmetic.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "khub_kernels/types.h"

namespace khub_test {
namespace {

using khub_kernels::fast_div_host;
using khub_kernels::make_fast_div;

constexpr uint32_t kMaxDividend = 0x7fffffffu;

// Dividends around every multiple of d that the tests reach, and the ends of the range.
std::vector<uint32_t> dividends(uint32_t d, std::mt19937& rng) {
  std::vector<uint32_t> n{0, 1, d - 1, d, d + 1, kMaxDividend, kMaxDividend - 1, kMaxDividend - d};
  const uint32_t last = kMaxDividend / d;
  for (uint32_t q : {uint32_t{2}, uint32_t{3}, last - 1, last}) {
    const uint64_t base = uint64_t{q} * d;
    for (int64_t delta : {-1, 0, 1})
      if (base + delta <= kMaxDividend && static_cast<int64_t>(base) + delta >= 0) n.push_back(uint32_t(base + delta));
  }
  std::uniform_int_distribution<uint32_t> any(0, kMaxDividend);
  for (int i = 0; i < 64; ++i) n.push_back(any(rng));
  return n;
}

void expect_exact(uint32_t d, std::mt19937& rng) {
  const auto f = make_fast_div(d);
  for (uint32_t n : dividends(d, rng)) ASSERT_EQ(fast_div_host(f, n), n / d) << n << " / " << d;
}

TEST(FastDiv, MatchesDivisionForSmallDivisors) {
  std::mt19937 rng(7);
  for (uint32_t d = 1; d <= 5000; ++d) expect_exact(d, rng);
}

TEST(FastDiv, MatchesDivisionForPowersOfTwoAndTheirNeighbours) {
  std::mt19937 rng(11);
  for (int s = 1; s < 31; ++s)
    for (int64_t delta : {-1, 0, 1}) expect_exact(uint32_t((int64_t{1} << s) + delta), rng);
  expect_exact(kMaxDividend, rng);
}

TEST(FastDiv, MatchesDivisionForRandomDivisors) {
  std::mt19937 rng(13);
  std::uniform_int_distribution<uint32_t> any(1, kMaxDividend);
  for (int i = 0; i < 2000; ++i) expect_exact(any(rng), rng);
}

TEST(FastDiv, ModelSequenceLengthsDivideEveryToken) {
  // Every token index of the LTX shapes the suite runs, against their sequence lengths.
  for (uint32_t seq : {2688u, 8064u, 2310u, 7392u, 1024u, 4096u}) {
    const auto f = make_fast_div(seq);
    for (uint32_t t = 0; t < 4 * seq; ++t) ASSERT_EQ(fast_div_host(f, t), t / seq) << t << " / " << seq;
  }
}

}  // namespace
}  // namespace khub_test
