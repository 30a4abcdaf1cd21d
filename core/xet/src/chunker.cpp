#include "khub/xet/chunker.h"

#include <algorithm>

#include "gear_table.h"

namespace khub::xet {
namespace {
// A boundary is where the top 16 bits of the gear hash are zero: probability 2^-16 per byte, so
// chunks average 64 KiB past the minimum.
constexpr std::uint64_t kBoundaryMask = 0xFFFF000000000000ULL;
// The gear hash depends only on the last 64 bytes (each step shifts one bit out), so the first
// MIN - 65 bytes of a chunk need not be hashed: the hash is the same from the minimum on.
constexpr std::size_t kUnhashedPrefix = kMinChunk - 64 - 1;
}  // namespace

std::optional<std::size_t> Chunker::next_boundary(std::span<const std::byte> data) {
  const std::uint64_t* table = detail::kGearTable.data();
  const std::size_t n = data.size();
  std::size_t i = 0;
  if (size_ < kUnhashedPrefix) {
    i = std::min(kUnhashedPrefix - size_, n);
    size_ += i;
  }
  std::uint64_t gear = gear_;
  for (; i < n && size_ < kMinChunk - 1; ++i, ++size_)
    gear = (gear << 1) + table[static_cast<std::uint8_t>(data[i])];
  if (i < n) {
    // From the minimum on, every byte may end the chunk; the maximum ends it regardless.
    const std::size_t take = std::min(kMaxChunk - size_, n - i);
    const std::size_t end = i + take;
    for (; i < end; ++i) {
      gear = (gear << 1) + table[static_cast<std::uint8_t>(data[i])];
      if ((gear & kBoundaryMask) == 0) {
        gear_ = 0;
        size_ = 0;
        return i + 1;
      }
    }
    size_ += take;
    if (size_ == kMaxChunk) {
      gear_ = 0;
      size_ = 0;
      return end;
    }
  }
  gear_ = gear;
  return std::nullopt;
}

std::vector<std::size_t> chunk_lengths(std::span<const std::byte> data) {
  std::vector<std::size_t> lengths;
  Chunker chunker;
  std::size_t start = 0;
  while (start < data.size()) {
    const auto cut = chunker.next_boundary(data.subspan(start));
    if (!cut) {
      lengths.push_back(data.size() - start);
      break;
    }
    lengths.push_back(*cut);
    start += *cut;
  }
  return lengths;
}

}  // namespace khub::xet
