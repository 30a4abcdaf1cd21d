#include "khub/xet/hash.h"

#include <gtest/gtest.h>

#include <string>

#include "khub/base/hash.h"
#include "test_data.h"
#include "gear_table.h"  // private to khub::xet; the test pins its values

namespace khub::xet {
namespace {

using testing::bytes_of;

TEST(XetHash, StringFormReversesEachEightByteGroup) {
  Hash h;
  for (int i = 0; i < 32; ++i) h.bytes[i] = static_cast<std::uint8_t>(i);
  EXPECT_EQ(h.str(), "07060504030201000f0e0d0c0b0a090817161514131211101f1e1d1c1b1a1918");
  EXPECT_EQ(parse_hash(h.str()), h);
  EXPECT_EQ(parse_hash("07060504030201000F0E0D0C0B0A090817161514131211101F1E1D1C1B1A1918"), h);
  EXPECT_EQ(h.word(0), 0x0706050403020100ULL);
  EXPECT_FALSE(parse_hash(h.str().substr(1)));
  EXPECT_FALSE(parse_hash(h.str() + "0"));
  EXPECT_FALSE(parse_hash(std::string(63, '0') + "g"));
}

TEST(XetHash, GearTableIsRustGearhashDefault) {
  std::string packed;
  for (std::uint64_t v : detail::kGearTable)
    for (int i = 0; i < 8; ++i) packed.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  EXPECT_EQ(sha256_hex(packed), "e1d3936666d7ae7a977c958e9afcc75f90aaca758ce5fbe4ece61dffefe1912c");
}

TEST(XetHash, HelloWorldVectors) {
  const Hash chunk = chunk_hash(bytes_of("hello world"));
  EXPECT_EQ(chunk.str(), "4e39378b9d359f118190557a1f44130219a54e5fcfa07bd96cf50b466fe651b1");
  EXPECT_EQ(to_hex(chunk.bytes), "119f359d8b37394e0213441f7a559081d97ba0cf5f4ea519b151e66f460bf56c");
  const HashedSize leaf{chunk, 11};
  EXPECT_EQ(file_hash(std::span(&leaf, 1)).str(),
            "f15edd43b7e85cfd25e2758ffe13b99fdd09dfa817e8d9f6548722a7a126db7f");
  EXPECT_EQ(xorb_hash(std::span(&leaf, 1)), chunk) << "a one-chunk xorb is named by its chunk";
}

TEST(XetHash, EmptyFileIsZero) {
  EXPECT_TRUE(file_hash({}).is_zero());
  EXPECT_EQ(file_hash({}).str(), std::string(64, '0'));
}

TEST(XetHash, Sha256KeepsItsHexThroughTheXetOrder) {
  const std::string hex = "3926be0366d56e94aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbcccccccccccccccc";
  const auto h = hash_from_sha256_hex(hex);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->str(), hex);
  EXPECT_EQ(to_hex(std::span(h->bytes).first(8)), "946ed56603be2639") << "stored byte-reversed per group";
}

}  // namespace
}  // namespace khub::xet
