#include "khub/xet/xorb.h"

#include <gtest/gtest.h>

#include <cstring>

#include "khub/xet/chunker.h"
#include "test_data.h"

namespace khub::xet {
namespace {

// Float-like data: the high bytes of each 4-byte word barely change, so byte grouping pays.
std::vector<std::byte> float_like(std::size_t n) {
  std::vector<std::byte> out(n);
  auto noise = testing::lcg_bytes(n, 5);
  for (std::size_t i = 0; i < n; ++i) out[i] = (i % 4 >= 2) ? std::byte{0x3f} : noise[i];
  return out;
}

XorbWriter write_chunks(std::span<const std::byte> data, CompressionPolicy policy) {
  XorbWriter w(policy);
  std::size_t at = 0;
  for (std::size_t n : chunk_lengths(data)) {
    w.add(data.subspan(at, n), chunk_hash(data.subspan(at, n)));
    at += n;
  }
  return w;
}

std::vector<std::byte> decode_all(std::span<const std::byte> records) {
  std::vector<std::byte> out;
  while (!records.empty()) {
    auto n = decode_record(records, out);
    EXPECT_TRUE(n) << n.error().message;
    if (!n) break;
    records = records.subspan(*n);
  }
  return out;
}

TEST(XetXorb, EveryPolicyRoundTripsAndNamesTheSameXorb) {
  const std::string text_bytes(300000, 'k');  // outlives the span over it
  const auto text = testing::bytes_of(text_bytes);
  const auto random = testing::lcg_bytes(700000, 9);
  const auto floats = float_like(500000);
  for (auto data : {text, std::span<const std::byte>(random), std::span<const std::byte>(floats)}) {
    Hash name;
    for (auto policy : {CompressionPolicy::None, CompressionPolicy::Lz4, CompressionPolicy::Auto}) {
      const auto w = write_chunks(data, policy);
      const auto decoded = decode_all(w.records());
      ASSERT_EQ(decoded.size(), data.size());
      EXPECT_EQ(std::memcmp(decoded.data(), data.data(), data.size()), 0);
      const auto index = index_xorb(w.records());
      ASSERT_TRUE(index) << index.error().message;
      EXPECT_EQ(index->hash, w.hash());
      EXPECT_EQ(index->unpacked_size, data.size());
      EXPECT_EQ(index->records_size, w.records().size());
      if (policy == CompressionPolicy::None) name = w.hash();
      EXPECT_EQ(w.hash(), name) << "compression never changes a xorb's name";
    }
  }
}

TEST(XetXorb, CompressionIsChosenByContent) {
  EXPECT_EQ(choose_compression(float_like(65536)), Compression::ByteGrouping4Lz4);
  EXPECT_EQ(choose_compression(testing::lcg_bytes(65536)), Compression::Lz4);
  std::vector<std::byte> records;
  append_record(records, float_like(65536), Compression::ByteGrouping4Lz4);
  EXPECT_EQ(records[4], std::byte{2});
  EXPECT_LT(records.size(), 65536u * 6 / 10) << "half the bytes are constant";
  records.clear();
  append_record(records, testing::lcg_bytes(65536), Compression::Lz4);
  EXPECT_EQ(records[4], std::byte{0}) << "incompressible data is stored raw";
  EXPECT_EQ(records.size(), 65536u + kRecordHeaderSize);
}

TEST(XetXorb, FooterEndsTheRecords) {
  const auto data = testing::lcg_bytes(200000);
  auto w = write_chunks(data, CompressionPolicy::Lz4);
  auto body = w.records();
  const std::string footer = "XETBLOB\x01 and the rest of a local store's footer";
  for (char c : footer) body.push_back(static_cast<std::byte>(c));
  const auto index = index_xorb(body);
  ASSERT_TRUE(index) << index.error().message;
  EXPECT_EQ(index->records_size, w.records().size());
  EXPECT_EQ(index->hash, w.hash());
}

TEST(XetXorb, MalformedRecordsAreProtocolErrors) {
  const auto data = testing::lcg_bytes(20000);
  std::vector<std::byte> good;
  append_record(good, testing::bytes_of(std::string(20000, 'a')), Compression::Lz4);
  auto expect_bad = [](std::vector<std::byte> body, const char* why) {
    auto index = index_xorb(body);
    ASSERT_FALSE(index) << why;
    EXPECT_EQ(index.error().code, ErrorCode::Protocol) << why;
  };
  expect_bad({}, "empty");
  expect_bad(std::vector<std::byte>(good.begin(), good.begin() + 5), "truncated header");
  expect_bad(std::vector<std::byte>(good.begin(), good.end() - 1), "truncated payload");
  auto v = good;
  v[0] = std::byte{1};
  expect_bad(v, "version 1");
  v = good;
  v[4] = std::byte{7};
  expect_bad(v, "unknown scheme");
  v = good;
  v[5] = std::byte{0x10};  // claims 16 bytes: the frame holds 20000 (a decompression bomb)
  v[6] = v[7] = std::byte{0};
  expect_bad(v, "more bytes than declared");
  v = good;
  v[7] = std::byte{0x10};  // claims over 128 KiB
  expect_bad(v, "chunk too large");
  v = good;
  v[good.size() / 2] ^= std::byte{0xff};
  auto corrupted = index_xorb(v);
  if (corrupted) {
    EXPECT_NE(corrupted->hash, index_xorb(good)->hash) << "a changed byte changes the name";
  }
}

TEST(XetXorb, WriterStopsAtTheLimits) {
  XorbWriter w(CompressionPolicy::None);
  EXPECT_TRUE(w.fits(kMaxXorbBytes));
  EXPECT_FALSE(w.fits(kMaxXorbBytes + 1));
  const std::vector<std::byte> tiny(1);
  for (std::size_t i = 0; i < kMaxXorbChunks; ++i) w.add(tiny, chunk_hash(tiny));
  EXPECT_FALSE(w.fits(1)) << "8192 chunks at most";
}

}  // namespace
}  // namespace khub::xet
