#pragma once
// Shards (docs/xet.md "Shards"): the binary index an upload sends after its xorbs. It says which
// chunk ranges of which xorbs make each file (with a verification hash per range and the file's
// sha256), and lists the chunks of the xorbs the upload created. Records are 48 bytes; every
// integer is little-endian.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/xet/hash.h"

namespace khub::xet {

/// Chunks [chunk_start, chunk_end) of a xorb, `unpacked_bytes` of content: one piece of a file.
struct FileTerm {
  Hash xorb;
  std::uint32_t chunk_start = 0;
  std::uint32_t chunk_end = 0;
  std::uint32_t unpacked_bytes = 0;
  Hash verification;  // verification_hash of the term's chunks; zero when the shard has none
};

struct FileInfo {
  Hash file_hash;
  std::vector<FileTerm> terms;  // in file order
  bool has_verification = false;
  std::optional<Hash> sha256;   // printed with Hash::str() it is the usual sha256 hex
};

struct XorbChunkInfo {
  Hash hash;
  std::uint32_t unpacked_start = 0;
  std::uint32_t size = 0;
  std::uint32_t flags = 0;  // bit 31: a global-dedup candidate
};

struct XorbInfo {
  Hash xorb;
  std::vector<XorbChunkInfo> chunks;
  std::uint32_t unpacked_bytes = 0;
  std::uint32_t bytes_on_disk = 0;  // serialized length; hf_xet 1.8.0 sends 0
};

struct Shard {
  std::vector<FileInfo> files;
  std::vector<XorbInfo> xorbs;
  Hash chunk_hmac_key;  // zero: chunk hashes are plain
  std::uint64_t key_expiry = UINT64_MAX;
  std::uint64_t creation_time = 0;
};

/// Upload: header + the two sections, as POST /v1/shards takes it. Stored: also the lookup tables
/// and the 200-byte footer, as caches and global-dedup answers hold it.
enum class ShardLayout { Upload, Stored };

/// Serializes a shard; files are written sorted by file hash, as hf_xet writes them.
[[nodiscard]] std::string write_shard(const Shard& shard, ShardLayout layout = ShardLayout::Upload);

/// Reads either layout. Bounds: at most `max_entries` 48-byte records in all (the caller's limit
/// for an untrusted body); a file's verification and sha256 flags must match what follows it.
[[nodiscard]] Expected<Shard> read_shard(std::span<const std::byte> bytes, std::size_t max_entries = 1u << 22);

}  // namespace khub::xet
