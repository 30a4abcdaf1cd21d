#include "khub/xet/shard.h"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace khub::xet {
namespace {

constexpr std::size_t kRecord = 48;
constexpr std::size_t kFooterSize = 200;
constexpr std::uint64_t kShardVersion = 2;
constexpr std::uint64_t kFooterVersion = 1;
constexpr std::uint32_t kFlagVerification = 0x80000000u;
constexpr std::uint32_t kFlagSha256 = 0x40000000u;
// "HFRepoMetaData\0" and 17 magic bytes: the first 32 bytes of every shard.
constexpr std::uint8_t kTag[32] = {0x48, 0x46, 0x52, 0x65, 0x70, 0x6f, 0x4d, 0x65, 0x74, 0x61, 0x44,
                                   0x61, 0x74, 0x61, 0x00, 0x55, 0x69, 0x67, 0x45, 0x6a, 0x7b, 0x81,
                                   0x57, 0x83, 0xa5, 0xbd, 0xd9, 0x5c, 0xcd, 0xd1, 0x4a, 0xa9};

class Writer {
 public:
  void bytes(const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); }
  void hash(const Hash& h) { bytes(h.bytes.data(), 32); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void zeros(std::size_t n) { out.append(n, '\0'); }
  void bookend() {
    out.append(32, '\xff');
    zeros(16);
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> b) : b_(b) {}
  [[nodiscard]] std::size_t left() const { return b_.size() - at_; }
  [[nodiscard]] std::size_t at() const { return at_; }
  [[nodiscard]] bool at_bookend() const {
    for (std::size_t i = 0; i < 32; ++i)
      if (b_[at_ + i] != std::byte{0xff}) return false;
    return true;
  }
  Hash hash() {
    Hash h;
    std::memcpy(h.bytes.data(), b_.data() + at_, 32);
    at_ += 32;
    return h;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b_[at_ + i]);
    at_ += 4;
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(b_[at_ + i]);
    at_ += 8;
    return v;
  }
  void skip(std::size_t n) { at_ += n; }
  void seek(std::size_t to) { at_ = to; }

 private:
  std::span<const std::byte> b_;
  std::size_t at_ = 0;
};

Error bad_shard(const std::string& what) { return Error(ErrorCode::Protocol, "xet shard: " + what); }

std::uint64_t prefix(const Hash& h) { return h.word(0); }

}  // namespace

std::string write_shard(const Shard& shard, ShardLayout layout) {
  const bool stored = layout == ShardLayout::Stored;
  Writer w;
  w.bytes(kTag, 32);
  w.u64(kShardVersion);
  w.u64(stored ? kFooterSize : 0);

  std::vector<const FileInfo*> files;
  for (const auto& f : shard.files) files.push_back(&f);
  std::sort(files.begin(), files.end(), [](auto* a, auto* b) { return a->file_hash < b->file_hash; });
  std::vector<std::tuple<std::uint64_t, std::uint32_t>> file_lookup;
  std::uint64_t materialized = 0;
  for (const FileInfo* f : files) {
    file_lookup.emplace_back(prefix(f->file_hash), static_cast<std::uint32_t>((w.out.size() - kRecord) / kRecord));
    std::uint32_t flags = 0;
    if (f->has_verification) flags |= kFlagVerification;
    if (f->sha256) flags |= kFlagSha256;
    w.hash(f->file_hash);
    w.u32(flags);
    w.u32(static_cast<std::uint32_t>(f->terms.size()));
    w.u64(0);
    for (const auto& t : f->terms) {
      w.hash(t.xorb);
      w.u32(0);
      w.u32(t.unpacked_bytes);
      w.u32(t.chunk_start);
      w.u32(t.chunk_end);
      materialized += t.unpacked_bytes;
    }
    if (f->has_verification)
      for (const auto& t : f->terms) {
        w.hash(t.verification);
        w.zeros(16);
      }
    if (f->sha256) {
      w.hash(*f->sha256);
      w.zeros(16);
    }
  }
  w.bookend();

  const std::size_t xorb_offset = w.out.size();
  std::vector<std::tuple<std::uint64_t, std::uint32_t>> xorb_lookup;
  std::vector<std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>> chunk_lookup;
  std::uint64_t stored_bytes = 0, on_disk = 0;
  for (const auto& x : shard.xorbs) {
    const auto block = static_cast<std::uint32_t>((w.out.size() - xorb_offset) / kRecord);
    xorb_lookup.emplace_back(prefix(x.xorb), block);
    w.hash(x.xorb);
    w.u32(0);
    w.u32(static_cast<std::uint32_t>(x.chunks.size()));
    w.u32(x.unpacked_bytes);
    w.u32(x.bytes_on_disk);
    for (std::size_t i = 0; i < x.chunks.size(); ++i) {
      const auto& c = x.chunks[i];
      chunk_lookup.emplace_back(prefix(c.hash), block, static_cast<std::uint32_t>(i));
      w.hash(c.hash);
      w.u32(c.unpacked_start);
      w.u32(c.size);
      w.u32(c.flags);
      w.u32(0);
    }
    stored_bytes += x.unpacked_bytes;
    on_disk += x.bytes_on_disk;
  }
  w.bookend();
  if (!stored) return std::move(w.out);

  std::sort(file_lookup.begin(), file_lookup.end());
  std::sort(xorb_lookup.begin(), xorb_lookup.end());
  std::sort(chunk_lookup.begin(), chunk_lookup.end());
  const std::size_t file_lookup_offset = w.out.size();
  for (auto [key, index] : file_lookup) {
    w.u64(key);
    w.u32(index);
  }
  const std::size_t xorb_lookup_offset = w.out.size();
  for (auto [key, index] : xorb_lookup) {
    w.u64(key);
    w.u32(index);
  }
  const std::size_t chunk_lookup_offset = w.out.size();
  for (auto [key, block, index] : chunk_lookup) {
    w.u64(key);
    w.u32(block);
    w.u32(index);
  }
  const std::size_t footer_offset = w.out.size();
  w.u64(kFooterVersion);
  w.u64(kRecord);
  w.u64(xorb_offset);
  w.u64(file_lookup_offset);
  w.u64(file_lookup.size());
  w.u64(xorb_lookup_offset);
  w.u64(xorb_lookup.size());
  w.u64(chunk_lookup_offset);
  w.u64(chunk_lookup.size());
  w.hash(shard.chunk_hmac_key);
  w.u64(shard.creation_time);
  w.u64(shard.key_expiry);
  w.zeros(6 * 8);
  w.u64(on_disk);
  w.u64(materialized);
  w.u64(stored_bytes);
  w.u64(footer_offset);
  return std::move(w.out);
}

Expected<Shard> read_shard(std::span<const std::byte> bytes, std::size_t max_entries) {
  if (bytes.size() < kRecord) return bad_shard("shorter than its header");
  if (std::memcmp(bytes.data(), kTag, 32) != 0) return bad_shard("does not start with the shard tag");
  Reader r(bytes);
  r.skip(32);
  if (const auto version = r.u64(); version != kShardVersion)
    return bad_shard("version " + std::to_string(version) + " (khub reads version 2)");
  const std::uint64_t footer_size = r.u64();
  if (footer_size != 0 && footer_size != kFooterSize)
    return bad_shard("footer size " + std::to_string(footer_size));
  if (footer_size > bytes.size() - kRecord) return bad_shard("footer larger than the shard");
  // Records end where the footer begins; the lookup tables between are not needed to read it.
  const std::size_t end = bytes.size() - footer_size;
  std::size_t records = 0;
  auto next_record = [&]() -> Status {
    if (end - r.at() < kRecord) return bad_shard("truncated record section");
    if (++records > max_entries) return bad_shard("more than " + std::to_string(max_entries) + " records");
    return {};
  };

  Shard shard;
  for (;;) {
    KHUB_CHECK(next_record());
    if (r.at_bookend()) {
      r.skip(kRecord);
      break;
    }
    FileInfo f;
    f.file_hash = r.hash();
    const std::uint32_t flags = r.u32();
    const std::uint32_t n = r.u32();
    r.skip(8);
    const std::size_t following = std::size_t{n} * (1 + ((flags & kFlagVerification) ? 1 : 0)) +
                                  ((flags & kFlagSha256) ? 1 : 0);
    if (following > (end - r.at()) / kRecord) return bad_shard("a file's entries run past the section");
    f.terms.resize(n);
    for (auto& t : f.terms) {
      KHUB_CHECK(next_record());
      t.xorb = r.hash();
      r.skip(4);
      t.unpacked_bytes = r.u32();
      t.chunk_start = r.u32();
      t.chunk_end = r.u32();
      if (t.chunk_start >= t.chunk_end) return bad_shard("a term with an empty chunk range");
    }
    if (flags & kFlagVerification) {
      f.has_verification = true;
      for (auto& t : f.terms) {
        KHUB_CHECK(next_record());
        t.verification = r.hash();
        r.skip(16);
      }
    }
    if (flags & kFlagSha256) {
      KHUB_CHECK(next_record());
      f.sha256 = r.hash();
      r.skip(16);
    }
    shard.files.push_back(std::move(f));
  }
  for (;;) {
    KHUB_CHECK(next_record());
    if (r.at_bookend()) {
      r.skip(kRecord);
      break;
    }
    XorbInfo x;
    x.xorb = r.hash();
    r.skip(4);
    const std::uint32_t n = r.u32();
    x.unpacked_bytes = r.u32();
    x.bytes_on_disk = r.u32();
    if (n > (end - r.at()) / kRecord) return bad_shard("a xorb's chunks run past the section");
    x.chunks.resize(n);
    for (auto& c : x.chunks) {
      KHUB_CHECK(next_record());
      c.hash = r.hash();
      c.unpacked_start = r.u32();
      c.size = r.u32();
      c.flags = r.u32();
      r.skip(4);
    }
    shard.xorbs.push_back(std::move(x));
  }
  if (footer_size == kFooterSize) {
    r.seek(end);
    if (r.u64() != kFooterVersion) return bad_shard("footer version is not 1");
    r.seek(end + 72);
    shard.chunk_hmac_key = r.hash();
    shard.creation_time = r.u64();
    shard.key_expiry = r.u64();
  }
  return shard;
}

}  // namespace khub::xet
