#include "khub/xet/chunker.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "khub/base/hash.h"
#include "khub/xet/hash.h"
#include "khub/xet/xorb.h"
#include "test_data.h"

namespace khub::xet {
namespace {

std::vector<HashedSize> leaves_of(std::span<const std::byte> data) {
  std::vector<HashedSize> out;
  std::size_t at = 0;
  for (std::size_t n : chunk_lengths(data)) {
    out.push_back({chunk_hash(data.subspan(at, n)), n});
    at += n;
  }
  return out;
}

TEST(XetChunker, EmptyInputHasNoChunks) { EXPECT_TRUE(chunk_lengths({}).empty()); }

TEST(XetChunker, SmallInputIsOneShortChunk) {
  const auto data = testing::lcg_bytes(100);
  EXPECT_EQ(chunk_lengths(data), std::vector<std::size_t>{100});
}

TEST(XetChunker, ZerosCutAtTheMaximum) {
  const std::vector<std::byte> zeros(1'000'000);
  std::vector<std::size_t> expected(7, 131072);
  expected.push_back(82496);
  EXPECT_EQ(chunk_lengths(zeros), expected);
  EXPECT_EQ(file_hash(leaves_of(zeros)).str(), "c0c85185f4307d40facfd366573176e54fc9c76041e44e32d52489780a6d1eaa");
}

TEST(XetChunker, LcgMegabyteVectors) {
  const auto data = testing::lcg_bytes(1 << 20);
  const auto lengths = chunk_lengths(data);
  ASSERT_EQ(lengths.size(), 22u);
  std::vector<std::size_t> ends;
  std::partial_sum(lengths.begin(), lengths.end(), std::back_inserter(ends));
  EXPECT_EQ(std::vector<std::size_t>(ends.begin(), ends.begin() + 5),
            (std::vector<std::size_t>{126665, 143831, 165193, 281681, 308974}));
  const auto leaves = leaves_of(data);
  EXPECT_EQ(leaves[0].hash.str(), "035444c6dd21a3e30505ebc67372dc99fbe8a694abc41939defa621157c1d957");
  EXPECT_EQ(file_hash(leaves).str(), "a990b5ce6fdff1ced85d0385f5188376f94b75040f723d728d86e967a3c78a6d");
  EXPECT_EQ(xorb_hash(leaves).str(), "825761b018b79afb644dea5b9201a255a3c88332b3b3f8f7e1332a3d0da1672f");
  std::vector<Hash> hashes;
  for (const auto& l : leaves) hashes.push_back(l.hash);
  EXPECT_EQ(verification_hash(hashes).str(), "04930476ee7a9741c268243cc5c76897c9dd4ad729db4b2199fabb000803ac3d");
  EXPECT_EQ(sha256_hex(std::string_view(reinterpret_cast<const char*>(data.data()), data.size())),
            "ee252a9a06bccea2897b3e9ae6b1651a5807c1ea60cddcf962414bd2ce0a9669");
}

// Boundaries depend on content only: feeding the same bytes in any blocks cuts at the same places.
TEST(XetChunker, StreamingInAnyBlocksCutsAlike) {
  const auto data = testing::lcg_bytes(3 << 20, 7);
  const auto whole = chunk_lengths(data);
  std::mt19937 rng(1);
  for (int round = 0; round < 20; ++round) {
    Chunker chunker;
    std::vector<std::size_t> lengths;
    std::size_t at = 0, chunk = 0;
    while (at < data.size()) {
      std::size_t block = std::min<std::size_t>(1 + rng() % (round < 10 ? 97 : 300000), data.size() - at);
      auto piece = std::span(data).subspan(at, block);
      while (!piece.empty()) {
        const auto cut = chunker.next_boundary(piece);
        if (!cut) {
          chunk += piece.size();
          break;
        }
        lengths.push_back(chunk + *cut);
        chunk = 0;
        piece = piece.subspan(*cut);
      }
      at += block;
    }
    if (chunker.pending() > 0) lengths.push_back(chunker.pending());
    ASSERT_EQ(lengths, whole) << "round " << round;
  }
}

TEST(XetChunker, ChunksStayWithinLimits) {
  const auto data = testing::lcg_bytes(8 << 20, 3);
  const auto lengths = chunk_lengths(data);
  for (std::size_t i = 0; i + 1 < lengths.size(); ++i) {
    EXPECT_GE(lengths[i], kMinChunk);
    EXPECT_LE(lengths[i], kMaxChunk);
  }
}

// An edit in the middle changes only the chunks around it: the basis of Xet's deduplication.
TEST(XetChunker, AnEditChangesOnlyNearbyChunks) {
  auto data = testing::lcg_bytes(4 << 20, 11);
  const auto before = leaves_of(data);
  data[2 << 20] ^= std::byte{0x5a};
  const auto after = leaves_of(data);
  std::size_t shared = 0;
  for (const auto& a : after)
    for (const auto& b : before) shared += a.hash == b.hash;
  EXPECT_GE(shared + 3, after.size());
  EXPECT_LT(shared, after.size());
}

}  // namespace
}  // namespace khub::xet
