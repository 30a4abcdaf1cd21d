#pragma once
// Xet's hashes (docs/xet.md "Hashes"): keyed BLAKE3 over chunks, the variable fan-out Merkle tree that
// names xorbs and files, the per-term verification hash, and the string form every URL, JSON key and
// shard uses (four little-endian u64, each as 16 hex digits).
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace khub::xet {

struct Hash {
  std::array<std::uint8_t, 32> bytes{};

  /// The Xet string form: each 8-byte group byte-reversed, then lower-case hex.
  [[nodiscard]] std::string str() const;
  /// u64 little-endian of bytes [8k, 8k+8): the tree's grouping rule and the dedup sampling use it.
  [[nodiscard]] std::uint64_t word(int k) const;
  [[nodiscard]] bool is_zero() const;
  auto operator<=>(const Hash&) const = default;
};

/// Parses the Xet string form: exactly 64 hex digits, either case.
[[nodiscard]] std::optional<Hash> parse_hash(std::string_view text);

/// A standard SHA-256 digest as Xet stores it in shards: the digest's hex read with the Xet rule, so
/// that printing the stored hash gives the usual sha256 hex.
[[nodiscard]] std::optional<Hash> hash_from_sha256_hex(std::string_view sha256_hex);

/// One leaf or node of the tree: a hash and the number of content bytes under it.
struct HashedSize {
  Hash hash;
  std::uint64_t size = 0;
};

/// blake3_keyed(DATA_KEY, bytes): a chunk's name.
[[nodiscard]] Hash chunk_hash(std::span<const std::byte> bytes);
/// The aggregated (Merkle) root over chunks in order; zero hash for none. Names a xorb.
[[nodiscard]] Hash xorb_hash(std::span<const HashedSize> chunks);
/// blake3_keyed(FILE_KEY = zeros, root); the zero hash for an empty file. Names a file.
[[nodiscard]] Hash file_hash(std::span<const HashedSize> chunks);
/// blake3_keyed(VERIFICATION_KEY, raw chunk hashes of a term): proves a shard's term holds those chunks.
[[nodiscard]] Hash verification_hash(std::span<const Hash> chunk_hashes);
/// blake3_keyed(key, chunk hash): chunk hashes in a global-dedup shard with an HMAC key.
[[nodiscard]] Hash keyed_hash(const Hash& key, const Hash& chunk);

}  // namespace khub::xet
