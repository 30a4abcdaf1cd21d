#pragma once
// Xet's content-defined chunking (docs/xet.md "Chunking"): a gear rolling hash cuts chunks of 8 KiB to
// 128 KiB, 64 KiB on average, at the same places whatever blocks the input arrives in. Equal content
// gives equal chunks, so an edit changes only the chunks around it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace khub::xet {

inline constexpr std::size_t kMinChunk = 8 * 1024;
inline constexpr std::size_t kTargetChunk = 64 * 1024;
inline constexpr std::size_t kMaxChunk = 128 * 1024;

class Chunker {
 public:
  /// Scans `data`, which continues the current chunk. Returns the number of bytes of `data` that
  /// complete the chunk when a boundary falls inside it (the rest starts the next chunk: call again
  /// with it), or nothing when all of `data` was taken without a boundary.
  std::optional<std::size_t> next_boundary(std::span<const std::byte> data);
  /// Bytes taken into the current, unfinished chunk.
  [[nodiscard]] std::size_t pending() const { return size_; }

 private:
  std::uint64_t gear_ = 0;
  std::size_t size_ = 0;
};

/// The chunk lengths of a whole buffer, in order (none for an empty one).
[[nodiscard]] std::vector<std::size_t> chunk_lengths(std::span<const std::byte> data);

}  // namespace khub::xet
