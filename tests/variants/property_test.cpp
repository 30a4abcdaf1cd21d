// Properties over generated names and hosts: canonical names round-trip; resolution is a sorted,
// complete, input-order-independent trace whose accepted entries are exactly what acceptance says.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>

#include "khub/variants/resolve.h"
#include "random_names.h"

namespace khub::variants {
namespace {

TEST(Properties, GeneratedNamesRoundTrip) {
  std::mt19937 rng(20261130);
  for (int i = 0; i < 5000; ++i) {
    const std::string name = random_variant_name(rng);
    Expected<Variant> v = parse_variant(name);
    ASSERT_TRUE(v) << name << ": " << v.error().message;
    EXPECT_EQ(v->name(), name);
    Expected<Variant> again = parse_variant(v->name());
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *v);
  }
}

TEST(Properties, MangledNamesFailWithOneLineOrParse) {
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    const std::string name = mangle(random_variant_name(rng), rng);
    Expected<Variant> v = parse_variant(name);
    if (v) {
      // Whatever parses renders to a name that parses to the same variant.
      Expected<Variant> again = parse_variant(v->name());
      ASSERT_TRUE(again) << name;
      EXPECT_EQ(*again, *v) << name;
    } else {
      EXPECT_EQ(v.error().code, ErrorCode::InvalidVariant);
      EXPECT_FALSE(v.error().message.empty());
      EXPECT_EQ(v.error().message.find('\n'), std::string::npos) << name;
    }
  }
}

TEST(Properties, ResolutionIsSortedCompleteAndDeterministic) {
  std::mt19937 rng(42);
  for (int i = 0; i < 1500; ++i) {
    const HostInfo host = random_host(rng);
    std::vector<std::string> names = random_candidate_set(rng, host);
    const Resolution r = resolve_variants(names, host);

    std::set<std::string> unique(names.begin(), names.end());
    ASSERT_EQ(r.decisions.size(), unique.size());
    std::vector<std::string> accepted_in_trace;
    for (size_t k = 0; k < r.decisions.size(); ++k) {
      const Decision& d = r.decisions[k];
      EXPECT_EQ(d.accepted, rejection_reason(d.variant, host).empty());
      EXPECT_EQ(d.reason, rejection_reason(d.variant, host));
      if (d.accepted) accepted_in_trace.push_back(d.name);
      if (k == 0) continue;
      const Decision& prev = r.decisions[k - 1];
      const auto a = std::make_tuple(sort_key(prev), prev.variant.is_arch() ? 0 : 1, prev.name);
      const auto b = std::make_tuple(sort_key(d), d.variant.is_arch() ? 0 : 1, d.name);
      EXPECT_LT(a, b) << "out of order: " << prev.name << " before " << d.name;
    }
    EXPECT_EQ(r.accepted(), accepted_in_trace);
    if (r.chosen()) {
      EXPECT_EQ(r.chosen()->name, accepted_in_trace.front());
    } else {
      EXPECT_TRUE(accepted_in_trace.empty());
    }

    for (int shuffle = 0; shuffle < 3; ++shuffle) {
      std::shuffle(names.begin(), names.end(), rng);
      const Resolution again = resolve_variants(names, host);
      EXPECT_EQ(again.trace(), r.trace());
      EXPECT_EQ(again.accepted(), r.accepted());
    }
  }
}

}  // namespace
}  // namespace khub::variants
