#include "khub/xet/shard.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "test_data.h"

namespace khub::xet {
namespace {

Hash named(std::uint8_t seed) {
  Hash h;
  for (int i = 0; i < 32; ++i) h.bytes[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return h;
}

Shard sample_shard() {
  Shard s;
  FileInfo a;
  a.file_hash = named(9);
  a.has_verification = true;
  a.sha256 = hash_from_sha256_hex(std::string(64, 'a'));
  a.terms = {{named(1), 0, 3, 1000, named(50)}, {named(2), 4, 9, 2000, named(51)}};
  FileInfo empty;  // an empty file: zero hash, no terms
  empty.has_verification = true;
  empty.sha256 = Hash{};
  s.files = {a, empty};
  XorbInfo x;
  x.xorb = named(1);
  x.unpacked_bytes = 1000;
  for (std::uint32_t i = 0; i < 3; ++i) x.chunks.push_back({named(100 + i), i * 300, i == 2 ? 400u : 300u, 0});
  x.chunks[0].flags = 0x80000000u;
  s.xorbs = {x};
  return s;
}

void expect_same(const Shard& a, const Shard& b) {
  ASSERT_EQ(a.files.size(), b.files.size());
  for (std::size_t i = 0; i < a.files.size(); ++i) {
    EXPECT_EQ(a.files[i].file_hash, b.files[i].file_hash);
    EXPECT_EQ(a.files[i].sha256, b.files[i].sha256);
    EXPECT_EQ(a.files[i].has_verification, b.files[i].has_verification);
    ASSERT_EQ(a.files[i].terms.size(), b.files[i].terms.size());
    for (std::size_t t = 0; t < a.files[i].terms.size(); ++t) {
      const auto &x = a.files[i].terms[t], &y = b.files[i].terms[t];
      EXPECT_EQ(x.xorb, y.xorb);
      EXPECT_EQ(x.chunk_start, y.chunk_start);
      EXPECT_EQ(x.chunk_end, y.chunk_end);
      EXPECT_EQ(x.unpacked_bytes, y.unpacked_bytes);
      EXPECT_EQ(x.verification, y.verification);
    }
  }
  ASSERT_EQ(a.xorbs.size(), b.xorbs.size());
  for (std::size_t i = 0; i < a.xorbs.size(); ++i) {
    EXPECT_EQ(a.xorbs[i].xorb, b.xorbs[i].xorb);
    EXPECT_EQ(a.xorbs[i].unpacked_bytes, b.xorbs[i].unpacked_bytes);
    ASSERT_EQ(a.xorbs[i].chunks.size(), b.xorbs[i].chunks.size());
    for (std::size_t c = 0; c < a.xorbs[i].chunks.size(); ++c) {
      EXPECT_EQ(a.xorbs[i].chunks[c].hash, b.xorbs[i].chunks[c].hash);
      EXPECT_EQ(a.xorbs[i].chunks[c].unpacked_start, b.xorbs[i].chunks[c].unpacked_start);
      EXPECT_EQ(a.xorbs[i].chunks[c].size, b.xorbs[i].chunks[c].size);
      EXPECT_EQ(a.xorbs[i].chunks[c].flags, b.xorbs[i].chunks[c].flags);
    }
  }
}

std::span<const std::byte> bytes(const std::string& s) { return std::as_bytes(std::span(s)); }

TEST(XetShard, UploadLayoutRoundTrips) {
  Shard s = sample_shard();
  const std::string wire = write_shard(s);
  // header + (file a: 1 + 2 terms + 2 verifications + 1 sha) + (empty: 1 + 1 sha) + bookend
  //        + (xorb: 1 + 3 chunks) + bookend, 48 bytes each
  EXPECT_EQ(wire.size(), 48u * (1 + 6 + 2 + 1 + 4 + 1));
  auto back = read_shard(bytes(wire));
  ASSERT_TRUE(back) << back.error().message;
  std::sort(s.files.begin(), s.files.end(), [](auto& a, auto& b) { return a.file_hash < b.file_hash; });
  expect_same(s, *back);
}

TEST(XetShard, StoredLayoutHasTablesAndFooter) {
  Shard s = sample_shard();
  s.chunk_hmac_key = named(77);
  s.key_expiry = 12345;
  const std::string stored = write_shard(s, ShardLayout::Stored);
  // + file lookup 2×12 + xorb lookup 1×12 + chunk lookup 3×16 + footer 200
  EXPECT_EQ(stored.size(), write_shard(s).size() + 24 + 12 + 48 + 200);
  auto back = read_shard(bytes(stored));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->chunk_hmac_key, named(77));
  EXPECT_EQ(back->key_expiry, 12345u);
  std::sort(s.files.begin(), s.files.end(), [](auto& a, auto& b) { return a.file_hash < b.file_hash; });
  expect_same(s, *back);
}

TEST(XetShard, EveryTruncationIsRefused) {
  const std::string wire = write_shard(sample_shard());
  for (std::size_t n = 0; n < wire.size(); n += 7) {
    auto r = read_shard(bytes(wire.substr(0, n)));
    ASSERT_FALSE(r) << n;
    EXPECT_EQ(r.error().code, ErrorCode::Protocol);
  }
}

TEST(XetShard, HostileCountsAndFlagsAreRefused) {
  std::string wire = write_shard(sample_shard());
  auto tampered = wire;
  tampered[48 + 36] = '\xff';  // the first file claims ~4 billion terms
  tampered[48 + 37] = '\xff';
  tampered[48 + 38] = '\xff';
  EXPECT_FALSE(read_shard(bytes(tampered)));
  tampered = wire;
  tampered[32] = 3;  // version 3
  EXPECT_FALSE(read_shard(bytes(tampered)));
  tampered = wire;
  tampered[0] = 'X';
  EXPECT_FALSE(read_shard(bytes(tampered)));
  EXPECT_FALSE(read_shard(bytes(wire), 5)) << "a record limit below the shard's size";
  EXPECT_TRUE(read_shard(bytes(wire), 14));
}

}  // namespace
}  // namespace khub::xet
