// The upload planner: first-pass scans, dedup against known chunks, xorb cuts, and the shard, each
// checked by rebuilding the files from the xorbs and the shard alone.
#include "khub/xet/upload.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "khub/xet/chunker.h"
#include "test_data.h"

namespace khub::xet {
namespace {

using testing::lcg_bytes;

struct Uploaded {
  std::map<Hash, NewXorb> xorbs;  // what the sink received
  Shard shard;                    // finish()'s shard, read back from its wire form
  std::vector<FilePlan> plans;
};

// Plans `files` against `known`, then reads the shard back from the bytes POST /v1/shards would carry.
Uploaded plan(const std::vector<std::vector<std::byte>>& files, const KnownChunks& known = {}, PackOptions o = {}) {
  Uploaded out;
  UploadPlanner planner(known, [&](NewXorb x) -> Status {
    EXPECT_FALSE(out.xorbs.contains(x.hash)) << "a xorb is handed out once";
    out.xorbs[x.hash] = std::move(x);
    return {};
  }, o);
  for (const auto& f : files) {
    auto p = planner.add_bytes(scan_bytes(f), f);
    EXPECT_TRUE(p) << p.error().message;
    if (p) out.plans.push_back(*p);
  }
  auto shard = planner.finish();
  EXPECT_TRUE(shard) << shard.error().message;
  const std::string wire = write_shard(*shard);
  auto back = read_shard(std::as_bytes(std::span(wire)));
  EXPECT_TRUE(back) << back.error().message;
  out.shard = *back;
  return out;
}

// Chunk contents of a serialized xorb, in order.
std::vector<std::vector<std::byte>> chunks_of(const std::vector<std::byte>& records) {
  std::vector<std::vector<std::byte>> out;
  auto index = index_xorb(records);
  EXPECT_TRUE(index) << index.error().message;
  if (!index) return out;
  for (const auto& c : index->chunks) {
    out.emplace_back();
    auto n = decode_record(std::span(records).subspan(c.record_start), out.back());
    EXPECT_TRUE(n);
  }
  return out;
}

// Rebuilds a file from its shard entry, checking every term's size and verification hash as a
// CAS does. `stored` holds every xorb the CAS has (earlier uploads and this one).
std::vector<std::byte> rebuild(const FileInfo& file, const std::map<Hash, NewXorb>& stored) {
  std::vector<std::byte> out;
  for (const auto& t : file.terms) {
    EXPECT_TRUE(stored.contains(t.xorb)) << "a term names a xorb the CAS lacks";
    if (!stored.contains(t.xorb)) return {};
    const auto chunks = chunks_of(stored.at(t.xorb).records);
    EXPECT_LE(t.chunk_end, chunks.size());
    EXPECT_LT(t.chunk_start, t.chunk_end);
    std::vector<Hash> hashes;
    std::uint64_t bytes = 0;
    for (std::uint32_t i = t.chunk_start; i < t.chunk_end && i < chunks.size(); ++i) {
      hashes.push_back(chunk_hash(chunks[i]));
      bytes += chunks[i].size();
      out.insert(out.end(), chunks[i].begin(), chunks[i].end());
    }
    EXPECT_EQ(bytes, t.unpacked_bytes);
    EXPECT_EQ(verification_hash(hashes), t.verification);
  }
  return out;
}

const FileInfo* find_file(const Shard& s, const std::vector<std::byte>& data) {
  const Hash h = scan_bytes(data).file_hash;
  for (const auto& f : s.files)
    if (f.file_hash == h) return &f;
  return nullptr;
}

// What a CAS would answer a global-dedup query with after `u`: the CAS-info of its xorbs.
KnownChunks known_after(const Uploaded& u) {
  KnownChunks known;
  known.add_shard(u.shard, 0);
  return known;
}

// `data` with `places` runs of `run` bytes flipped, spread evenly.
std::vector<std::byte> edited(std::vector<std::byte> data, int places, std::size_t run) {
  for (int p = 0; p < places; ++p) {
    const std::size_t at = data.size() / static_cast<std::size_t>(places + 1) * static_cast<std::size_t>(p + 1);
    for (std::size_t i = 0; i < run; ++i) data[at + i] ^= std::byte{0x5a};
  }
  return data;
}

TEST(XetUpload, ScanGivesTheChunksHashesAndSha256) {
  const auto data = lcg_bytes(1 << 20);
  const auto s = scan_bytes(data);
  EXPECT_EQ(s.size, data.size());
  ASSERT_EQ(s.chunks.size(), 22u);  // the published vector
  EXPECT_EQ(s.chunks[0].size, 126665u);
  EXPECT_EQ(s.chunks[0].hash.str(), "035444c6dd21a3e30505ebc67372dc99fbe8a694abc41939defa621157c1d957");
  EXPECT_EQ(s.file_hash.str(), "a990b5ce6fdff1ced85d0385f5188376f94b75040f723d728d86e967a3c78a6d");
  EXPECT_EQ(s.sha256_hex, "ee252a9a06bccea2897b3e9ae6b1651a5807c1ea60cddcf962414bd2ce0a9669");
  const auto empty = scan_bytes({});
  EXPECT_TRUE(empty.chunks.empty());
  EXPECT_TRUE(empty.file_hash.is_zero());
  EXPECT_EQ(empty.sha256_hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(XetUpload, ScanningAFileInBlocksEqualsScanningItWhole) {
  // 20 MiB: chunks straddle the scanner's 8 MiB blocks.
  const auto data = lcg_bytes(20u << 20, 3);
  const auto path = std::filesystem::path(::testing::TempDir()) / "khub_xet_scan.bin";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  auto from_file = scan_file(path);
  ASSERT_TRUE(from_file) << from_file.error().message;
  const auto whole = scan_bytes(data);
  EXPECT_EQ(from_file->file_hash, whole.file_hash);
  EXPECT_EQ(from_file->sha256_hex, whole.sha256_hex);
  ASSERT_EQ(from_file->chunks.size(), whole.chunks.size());
  const auto lengths = chunk_lengths(data);
  ASSERT_EQ(lengths.size(), whole.chunks.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) EXPECT_EQ(whole.chunks[i].size, lengths[i]);
  std::filesystem::remove(path);
  EXPECT_EQ(scan_file(path).error().code, ErrorCode::Io);
}

TEST(XetUpload, ANewFileGoesIntoOneXorbAndTheShardDescribesIt) {
  const auto data = lcg_bytes(1 << 20);
  const auto u = plan({data});
  ASSERT_EQ(u.xorbs.size(), 1u);
  const NewXorb& x = u.xorbs.begin()->second;
  EXPECT_EQ(x.hash.str(), "825761b018b79afb644dea5b9201a255a3c88332b3b3f8f7e1332a3d0da1672f");  // the published vector
  EXPECT_EQ(x.chunk_count, 22u);
  EXPECT_EQ(x.unpacked_bytes, data.size());
  EXPECT_EQ(u.plans[0].new_bytes, data.size());
  EXPECT_EQ(u.plans[0].deduplicated_bytes, 0u);

  ASSERT_EQ(u.shard.files.size(), 1u);
  const FileInfo& f = u.shard.files[0];
  EXPECT_EQ(f.file_hash.str(), "a990b5ce6fdff1ced85d0385f5188376f94b75040f723d728d86e967a3c78a6d");
  ASSERT_TRUE(f.sha256);
  EXPECT_EQ(f.sha256->str(), "ee252a9a06bccea2897b3e9ae6b1651a5807c1ea60cddcf962414bd2ce0a9669");
  EXPECT_TRUE(f.has_verification);
  ASSERT_EQ(f.terms.size(), 1u);
  EXPECT_EQ(f.terms[0].chunk_end, 22u);
  EXPECT_EQ(f.terms[0].verification.str(), "04930476ee7a9741c268243cc5c76897c9dd4ad729db4b2199fabb000803ac3d");
  EXPECT_EQ(rebuild(f, u.xorbs), data);

  ASSERT_EQ(u.shard.xorbs.size(), 1u);
  const XorbInfo& info = u.shard.xorbs[0];
  EXPECT_EQ(info.xorb, x.hash);
  EXPECT_EQ(info.unpacked_bytes, data.size());
  const auto scanned = scan_bytes(data);
  ASSERT_EQ(info.chunks.size(), 22u);
  std::uint32_t at = 0;
  for (std::size_t i = 0; i < 22; ++i) {
    EXPECT_EQ(info.chunks[i].hash, scanned.chunks[i].hash);
    EXPECT_EQ(info.chunks[i].unpacked_start, at);
    EXPECT_EQ(info.chunks[i].size, scanned.chunks[i].size);
    EXPECT_EQ(info.chunks[i].flags != 0, is_dedup_candidate(scanned.chunks[i].hash, i)) << i;
    at += info.chunks[i].size;
  }
  EXPECT_NE(info.chunks[0].flags, 0u) << "a file's first chunk is a global-dedup candidate";
}

TEST(XetUpload, XorbsAreCutAtTheChunkAndByteLimits) {
  const auto a = lcg_bytes(1 << 20, 1), b = lcg_bytes(700000, 2);
  for (PackOptions o : {PackOptions{CompressionPolicy::Lz4, kMaxXorbBytes, 5}, PackOptions{CompressionPolicy::None, 300000, 8192}}) {
    const auto u = plan({a, b}, {}, o);
    for (const auto& [hash, x] : u.xorbs) {
      EXPECT_LE(x.chunk_count, o.max_xorb_chunks);
      EXPECT_LE(x.unpacked_bytes, o.max_xorb_bytes);
      EXPECT_EQ(index_xorb(x.records)->hash, hash);
    }
    EXPECT_GT(u.xorbs.size(), 2u);
    EXPECT_EQ(u.shard.xorbs.size(), u.xorbs.size());
    for (const auto* data : {&a, &b}) {
      const FileInfo* f = find_file(u.shard, *data);
      ASSERT_NE(f, nullptr);
      EXPECT_GT(f->terms.size(), 1u) << "a file across xorbs has a term per xorb";
      EXPECT_EQ(rebuild(*f, u.xorbs), *data);
    }
  }
}

TEST(XetUpload, ChunksTheCasHoldsAreReferencedNotSent) {
  const auto v1 = lcg_bytes(16u << 20, 7);
  const auto first = plan({v1});
  // 1 % of the bytes changed, in four places.
  const auto v2 = edited(v1, 4, v1.size() / 400);
  const auto second = plan({v2}, known_after(first));
  const FilePlan& p = second.plans[0];
  EXPECT_EQ(p.new_bytes + p.deduplicated_bytes, v2.size());
  EXPECT_LT(p.new_bytes, v2.size() / 10) << "only the chunks around the edits are new";
  EXPECT_GT(p.new_bytes, 0u);
  std::map<Hash, NewXorb> stored = first.xorbs;
  for (const auto& [h, x] : second.xorbs) stored[h] = x;
  const FileInfo* f = find_file(second.shard, v2);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(rebuild(*f, stored), v2);
  // The shard lists only the new xorbs; the old one is referenced by terms alone.
  ASSERT_EQ(second.shard.xorbs.size(), 1u);
  EXPECT_FALSE(first.xorbs.contains(second.shard.xorbs[0].xorb));
  bool references_old = false;
  for (const auto& t : f->terms) references_old |= first.xorbs.contains(t.xorb);
  EXPECT_TRUE(references_old);

  const auto again = plan({v1}, known_after(first));
  EXPECT_TRUE(again.xorbs.empty()) << "an unchanged file needs no xorb";
  EXPECT_EQ(again.plans[0].deduplicated_bytes, v1.size());
  ASSERT_EQ(again.shard.files.size(), 1u);
  EXPECT_EQ(rebuild(again.shard.files[0], first.xorbs), v1);
}

TEST(XetUpload, RepeatedContentInOneUploadIsPackedOnce) {
  const auto data = lcg_bytes(600000, 4);
  const std::vector<std::byte> zeros(1 << 20);
  const auto u = plan({data, data, zeros});
  EXPECT_EQ(u.plans[1].new_bytes, 0u);
  EXPECT_EQ(u.plans[1].deduplicated_bytes, data.size());
  EXPECT_EQ(u.shard.files.size(), 2u) << "one entry per file hash";
  // 1 MiB of zeros is eight 128 KiB chunks of one content: one is sent.
  EXPECT_EQ(u.plans[2].new_bytes, kMaxChunk);
  std::uint64_t packed = 0;
  for (const auto& [h, x] : u.xorbs) packed += x.unpacked_bytes;
  EXPECT_EQ(packed, data.size() + kMaxChunk);
  EXPECT_EQ(rebuild(*find_file(u.shard, zeros), u.xorbs), zeros);
  EXPECT_EQ(rebuild(*find_file(u.shard, data), u.xorbs), data);
}

TEST(XetUpload, AnEmptyFileHasNoTerms) {
  const auto u = plan({{}});
  EXPECT_TRUE(u.xorbs.empty());
  ASSERT_EQ(u.shard.files.size(), 1u);
  EXPECT_TRUE(u.shard.files[0].file_hash.is_zero());
  EXPECT_TRUE(u.shard.files[0].terms.empty());
}

TEST(XetUpload, KeyedDedupAnswersMatchThroughTheirKey) {
  const auto data = lcg_bytes(1 << 20, 8);
  const auto first = plan({data});
  Shard answer = first.shard;
  answer.chunk_hmac_key.bytes.fill(7);
  for (auto& x : answer.xorbs)
    for (auto& c : x.chunks) c.hash = keyed_hash(answer.chunk_hmac_key, c.hash);
  answer.key_expiry = 2'000'000'000;
  KnownChunks known;
  known.add_shard(answer, 1'900'000'000);
  const auto second = plan({data}, known);
  EXPECT_EQ(second.plans[0].deduplicated_bytes, data.size());
  EXPECT_TRUE(known.holds(first.shard.xorbs[0].xorb, 0));

  KnownChunks expired;
  expired.add_shard(answer, 2'000'000'001);
  EXPECT_EQ(expired.size(), 0u) << "an answer past its key's expiry is not used";
}

TEST(XetUpload, AFileThatChangedAfterItsScanIsRefused) {
  auto data = lcg_bytes(300000, 5);
  const auto scanned = scan_bytes(data);
  data[200000] ^= std::byte{1};
  KnownChunks known;
  UploadPlanner planner(known, [](NewXorb) -> Status { return {}; });
  auto p = planner.add_bytes(scanned, data);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::Integrity);
}

TEST(XetUpload, ASinkErrorStopsThePlan) {
  const auto data = lcg_bytes(1 << 20, 6);
  KnownChunks known;
  UploadPlanner planner(known, [](NewXorb) -> Status { return Error(ErrorCode::Network, "xorb upload failed"); },
                        {CompressionPolicy::None, kMaxXorbBytes, 4});
  auto p = planner.add_bytes(scan_bytes(data), data);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "xorb upload failed");
}

// Packing chunks as scan_file finds them (one read) gives the xorbs and shard of scanning first
// and packing afterwards, with xorbs cut and content repeated inside and across files.
TEST(XetUpload, PackingWhileScanningEqualsScanningFirst) {
  auto first = lcg_bytes(12u << 20, 8);
  std::copy_n(first.begin(), 3u << 20, first.begin() + (6u << 20));  // repeated inside the file
  auto second = lcg_bytes(2u << 20, 9);
  std::copy_n(first.begin() + (1u << 20), 1u << 20, second.begin());  // and across files
  const PackOptions cut{CompressionPolicy::Auto, 5u << 20, kMaxXorbChunks};
  const Uploaded expected = plan({first, second}, {}, cut);

  const auto dir = std::filesystem::path(::testing::TempDir());
  std::map<Hash, NewXorb> xorbs;
  KnownChunks known;
  UploadPlanner planner(known, [&](NewXorb x) -> Status {
    xorbs[x.hash] = std::move(x);
    return {};
  }, cut);
  int n = 0;
  for (const auto* data : {&first, &second}) {
    const auto path = dir / ("khub_xet_stream_" + std::to_string(n++) + ".bin");
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(data->data()), static_cast<std::streamsize>(data->size()));
    ASSERT_TRUE(planner.begin_file());
    auto scanned = scan_file(path, true, [&](const HashedSize& c, std::span<const std::byte> b) {
      return planner.add_chunk(c, b);
    });
    ASSERT_TRUE(scanned) << scanned.error().message;
    ASSERT_TRUE(planner.end_file(scanned->file_hash, scanned->sha256_hex));
    std::filesystem::remove(path);
  }
  auto shard = planner.finish();
  ASSERT_TRUE(shard) << shard.error().message;
  EXPECT_GT(expected.xorbs.size(), 2u);
  ASSERT_EQ(xorbs.size(), expected.xorbs.size());
  for (const auto& [hash, x] : expected.xorbs) {
    ASSERT_TRUE(xorbs.contains(hash)) << hash.str();
    EXPECT_EQ(xorbs[hash].records, x.records);
  }
  EXPECT_EQ(write_shard(*shard), write_shard(expected.shard));
}

TEST(XetUpload, AStreamingPlanRefusesMisuseAndStopsAtASinkError) {
  KnownChunks known;
  UploadPlanner planner(known, [](NewXorb) -> Status { return Error(ErrorCode::Network, "xorb upload failed"); },
                        {CompressionPolicy::None, kMaxXorbBytes, 2});
  const auto data = lcg_bytes(1 << 20, 10);
  const auto scanned = scan_bytes(data);
  EXPECT_EQ(planner.add_chunk(scanned.chunks[0], std::span(data).first(scanned.chunks[0].size)).error().code,
            ErrorCode::InvalidArgument);  // outside a file
  ASSERT_TRUE(planner.begin_file());
  EXPECT_FALSE(planner.begin_file());
  EXPECT_EQ(planner.add_chunk(scanned.chunks[0], std::span(data).first(10)).error().code, ErrorCode::InvalidArgument);
  Status last;
  std::size_t offset = 0;
  for (const auto& c : scanned.chunks) {
    last = planner.add_chunk(c, std::span(data).subspan(offset, c.size));
    offset += c.size;
    if (!last) break;
  }
  ASSERT_FALSE(last);  // the third chunk seals the first xorb, which the sink refuses
  EXPECT_EQ(last.error().message, "xorb upload failed");
  EXPECT_EQ(planner.finish().error().code, ErrorCode::InvalidArgument);  // a file is still open
}

}  // namespace
}  // namespace khub::xet
