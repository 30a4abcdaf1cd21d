#pragma once
// Planning a Xet upload without the network (docs/xet.md "Upload"). A first pass chunks each file
// and hashes the chunks and the whole file (sha256 too) as it streams; dedup answers from the CAS
// then say which chunks it already holds; the planner references those, packs the rest into new
// xorbs (handed out as each fills, so they can be sent while planning goes on) and finally writes
// the shard that describes every file and every new xorb.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "khub/base/error.h"
#include "khub/xet/hash.h"
#include "khub/xet/shard.h"
#include "khub/xet/xorb.h"

namespace khub::xet {

/// A file as the first pass sees it.
struct ScannedFile {
  std::uint64_t size = 0;
  std::string sha256_hex;
  Hash file_hash;
  std::vector<HashedSize> chunks;  // in file order
};

/// Sees each chunk as the scan finds it (its bytes valid only during the call); an error it
/// returns stops the scan.
using ChunkSink = std::function<Status(const HashedSize& chunk, std::span<const std::byte> bytes)>;

/// Chunks, hashes and sha256 in one streaming read. Io when the file cannot be read. Without
/// `sha256` the sha256 is not computed (sha256_hex stays empty): for a caller that knows it.
[[nodiscard]] Expected<ScannedFile> scan_file(const std::filesystem::path& path, bool sha256 = true,
                                              const ChunkSink& sink = {});
[[nodiscard]] ScannedFile scan_bytes(std::span<const std::byte> data);

/// Whether hf_xet would make this chunk a global-dedup candidate: a file's first chunk, or one whose
/// hash's last word is 0 mod 1024. These are the chunks a client asks the CAS about, and the ones
/// an upload flags in its shard so that the CAS indexes them.
[[nodiscard]] bool is_dedup_candidate(const Hash& chunk, std::size_t index_in_file);

/// Chunk `index` of `xorb`.
struct ChunkLocation {
  Hash xorb;
  std::uint32_t index = 0;
};

/// Chunks the CAS is known to hold: from global-dedup answers (shards, their chunk hashes keyed
/// when the shard carries an HMAC key) or read from xorbs the server itself named.
class KnownChunks {
 public:
  void add(const Hash& chunk, const ChunkLocation& where);
  /// Every chunk of the shard's CAS-info blocks; nothing when its key has expired at `now`.
  void add_shard(const Shard& shard, std::uint64_t now_unix);
  [[nodiscard]] std::optional<ChunkLocation> find(const Hash& chunk) const;
  /// Whether chunk `index` of `xorb` is known (by any hash).
  [[nodiscard]] bool holds(const Hash& xorb, std::uint32_t index) const;
  [[nodiscard]] std::size_t size() const { return positions_.size(); }

 private:
  std::map<Hash, ChunkLocation> plain_;
  std::map<Hash, std::map<Hash, ChunkLocation>> keyed_;  // HMAC key → keyed chunk hash → where
  std::set<std::pair<Hash, std::uint32_t>> positions_;
};

struct PackOptions {
  CompressionPolicy compression = CompressionPolicy::Auto;
  std::size_t max_xorb_bytes = kMaxXorbBytes;  // khub push: 16 MiB (publisher/src/xet_upload.cpp)
  std::size_t max_xorb_chunks = kMaxXorbChunks;
};

/// A new xorb, ready for POST /v1/xorbs/default/{hash}.
struct NewXorb {
  Hash hash;
  std::vector<std::byte> records;
  std::uint64_t unpacked_bytes = 0;
  std::size_t chunk_count = 0;
};

/// What one file's plan reuses and what it adds to new xorbs (content bytes, uncompressed).
struct FilePlan {
  std::uint64_t new_bytes = 0;
  std::uint64_t deduplicated_bytes = 0;  // chunks the CAS holds, or that this upload packed already
};

class UploadPlanner {
 public:
  /// Receives each new xorb once it is full, and the last one in finish(); an error it returns
  /// stops the planning and is returned by the call that sealed the xorb.
  using XorbSink = std::function<Status(NewXorb)>;
  /// Gives the planner a buffer for the next xorb's records: one a sent xorb left behind (its
  /// capacity kept), or an empty vector when there is none (the planner then reserves a new one).
  using BufferSource = std::function<std::vector<std::byte>()>;
  UploadPlanner(const KnownChunks& known, XorbSink sink, PackOptions options = {}, BufferSource buffers = {});

  /// Adds a scanned file. The chunks that must be sent are read again from `path` (or `data`) and
  /// must hash as scanned: Integrity otherwise (the file changed in between).
  [[nodiscard]] Expected<FilePlan> add_file(const ScannedFile& file, const std::filesystem::path& path);
  [[nodiscard]] Expected<FilePlan> add_bytes(const ScannedFile& file, std::span<const std::byte> data);

  /// A file added while it is scanned (one read of its bytes): begin_file(), then add_chunk() for
  /// each chunk in file order as scan_file's sink sees it, then end_file() with the scan's result.
  /// One file at a time.
  [[nodiscard]] Status begin_file();
  [[nodiscard]] Status add_chunk(const HashedSize& chunk, std::span<const std::byte> bytes);
  [[nodiscard]] Expected<FilePlan> end_file(const Hash& file_hash, std::string sha256_hex);

  /// Seals the last xorb and returns the shard: every file added (once per file hash; terms with
  /// verification hashes; the sha256) and the chunks of every new xorb. Call once, at the end.
  [[nodiscard]] Expected<Shard> finish();

 private:
  // A term's xorb: known to the CAS (hash), or the planner's new xorb number `slot`.
  struct XorbRef {
    bool is_new = false;
    std::size_t slot = 0;
    Hash hash;
    bool operator==(const XorbRef&) const = default;
  };
  struct PendingTerm {
    XorbRef xorb;
    std::uint32_t chunk_start = 0;
    std::uint32_t chunk_end = 0;
    std::uint32_t unpacked_bytes = 0;
    Hash verification;
  };
  struct PendingFile {
    Hash file_hash;
    std::string sha256_hex;
    std::vector<PendingTerm> terms;
  };
  // The file being added.
  struct OpenFile {
    std::vector<PendingTerm> terms;
    std::vector<Hash> term_chunks;  // chunk hashes of the last term, for its verification hash
    std::size_t chunks = 0;         // chunks placed so far
    FilePlan plan;
  };
  using ReadAt = std::function<Status(std::uint64_t offset, std::span<std::byte> out)>;
  // The bytes of the chunk being placed: asked for only when it must be packed.
  using BytesOf = std::function<Expected<std::span<const std::byte>>()>;

  Expected<FilePlan> add(const ScannedFile& file, const ReadAt& read);
  Status place(const HashedSize& chunk, const BytesOf& bytes_of);
  void extend(const XorbRef& xorb, std::uint32_t index, const HashedSize& chunk);
  void close_term();
  Status seal();

  XorbWriter fresh_writer();

  const KnownChunks& known_;
  XorbSink sink_;
  PackOptions options_;
  BufferSource buffers_;
  XorbWriter writer_;
  std::vector<XorbChunkInfo> writer_chunks_;  // CAS-info of the xorb being filled
  std::size_t slot_ = 0;                      // number of the xorb being filled
  std::vector<Hash> sealed_;                  // hash of each sealed slot
  std::map<Hash, std::pair<std::size_t, std::uint32_t>> packed_;  // chunk → (slot, index) of this upload
  std::vector<PendingFile> files_;
  std::optional<OpenFile> open_;
  std::vector<XorbInfo> new_xorbs_;
  bool finished_ = false;
};

}  // namespace khub::xet
