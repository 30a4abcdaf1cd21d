#pragma once
// Xorbs (docs/xet.md "Xorbs"): up to 64 MiB of chunks stored as records (an 8-byte header, then the
// chunk raw, LZ4-framed, or byte-grouped and LZ4-framed). A xorb is named by the tree hash of its
// chunks, so its name never depends on how its records are compressed.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "khub/base/error.h"
#include "khub/xet/hash.h"

namespace khub::xet {

inline constexpr std::size_t kMaxXorbBytes = 64 * 1024 * 1024;  // uncompressed chunk bytes
inline constexpr std::size_t kMaxXorbChunks = 8192;
inline constexpr std::size_t kRecordHeaderSize = 8;

enum class Compression : std::uint8_t { None = 0, Lz4 = 1, ByteGrouping4Lz4 = 2 };

/// How a writer compresses: Auto picks per chunk as hf_xet does (byte grouping for data whose bytes
/// differ by position mod 4, such as floats; raw when compression does not help).
enum class CompressionPolicy { None, Lz4, Auto };

/// One chunk of a xorb as an index of it records it.
struct XorbChunk {
  Hash hash;
  std::uint32_t record_start = 0;    // offset of its header in the record region
  std::uint32_t record_end = 0;      // one past its payload
  std::uint32_t unpacked_start = 0;  // offset of its bytes in the xorb's content
  std::uint32_t unpacked_size = 0;
};

struct XorbIndex {
  Hash hash;
  std::vector<XorbChunk> chunks;
  std::uint64_t records_size = 0;   // bytes of the record region (a trailing footer not counted)
  std::uint64_t unpacked_size = 0;  // content bytes
};

/// Reads a serialized xorb: every record header is checked, every chunk decompressed, hashed and
/// sized; a trailing "XETBLOB" footer (written by local stores) ends the records. Fails with
/// Protocol on a malformed record and InvalidArgument past the xorb limits; never reads outside
/// `body`.
[[nodiscard]] Expected<XorbIndex> index_xorb(std::span<const std::byte> body);

/// The length (header and payload) of the record that `header` starts, from its first
/// kRecordHeaderSize bytes; Protocol when they are fewer or no record of this format has them.
[[nodiscard]] Expected<std::size_t> record_length(std::span<const std::byte> header);

/// Decodes the record at the start of `records` and appends its chunk's bytes to `out`; returns the
/// record's length. Protocol on a malformed or truncated record.
[[nodiscard]] Expected<std::size_t> decode_record(std::span<const std::byte> records, std::vector<std::byte>& out);

/// Serializes one record; `compression` None/Lz4/ByteGrouping4Lz4 is used as asked except that a
/// compressed payload not smaller than the chunk is stored raw.
void append_record(std::vector<std::byte>& records, std::span<const std::byte> chunk, Compression compression);

/// Packs chunks into one xorb's records.
class XorbWriter {
 public:
  explicit XorbWriter(CompressionPolicy policy = CompressionPolicy::Auto) : policy_(policy) {}
  /// Writes into `buffer` (emptied; its capacity kept): a recycled one, or one reserved for a
  /// whole xorb, so that filling it neither moves the records nor touches fresh memory.
  XorbWriter(CompressionPolicy policy, std::vector<std::byte> buffer) : policy_(policy), records_(std::move(buffer)) {
    records_.clear();
  }
  /// Whether a chunk of `size` bytes still fits under the xorb limits.
  [[nodiscard]] bool fits(std::size_t size) const;
  void add(std::span<const std::byte> chunk, const Hash& hash);
  [[nodiscard]] bool empty() const { return chunks_.empty(); }
  [[nodiscard]] Hash hash() const;
  [[nodiscard]] const std::vector<std::byte>& records() const { return records_; }
  /// Moves the records out (the writer is spent: call when sealing).
  [[nodiscard]] std::vector<std::byte> take_records() { return std::move(records_); }
  [[nodiscard]] const std::vector<HashedSize>& chunks() const { return chunks_; }
  [[nodiscard]] std::uint64_t unpacked_size() const { return unpacked_; }

 private:
  CompressionPolicy policy_;
  Compression block_choice_ = Compression::Lz4;
  std::vector<std::byte> records_;
  std::vector<HashedSize> chunks_;
  std::uint64_t unpacked_ = 0;
};

/// The scheme hf_xet's Auto policy would pick for data like `sample` (its first chunk of a block).
[[nodiscard]] Compression choose_compression(std::span<const std::byte> sample);

}  // namespace khub::xet
