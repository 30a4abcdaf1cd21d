#include "khub/xet/hash.h"

#include <blake3.h>

#include <cstring>
#include <string>
#include <vector>

#include "blake3_keyed.h"

namespace khub::xet {
namespace {

// The keys of Xet's keyed hashes (numbers of the format; test vectors in tests/xet pin them).
constexpr Hash kDataKey{{102, 151, 245, 119, 91, 149, 80, 222, 49, 53, 203, 172, 165, 151, 24, 28,
                         157, 228, 33, 16, 155, 235, 43, 88, 180, 208, 176, 75, 147, 173, 242, 41}};
constexpr Hash kInternalNodeKey{{1, 126, 197, 199, 165, 71, 41, 150, 253, 148, 102, 102, 180, 138, 2, 230,
                                 93, 221, 83, 111, 55, 199, 109, 210, 248, 99, 82, 230, 74, 83, 113, 63}};
constexpr Hash kVerificationKey{{127, 24, 87, 214, 206, 86, 237, 102, 18, 127, 249, 19, 231, 165, 195, 243,
                                 164, 205, 38, 213, 181, 219, 73, 230, 65, 36, 152, 127, 40, 251, 148, 195}};
constexpr Hash kFileKey{};

std::span<const std::byte> as_bytes(const Hash& h) { return std::as_bytes(std::span(h.bytes)); }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A node of the tree: the lines "<hash> : <size>\n" of its children, hashed with the node key.
HashedSize merge(std::span<const HashedSize> children) {
  std::string text;
  text.reserve(children.size() * 88);
  std::uint64_t size = 0;
  for (const auto& c : children) {
    text += c.hash.str();
    text += " : ";
    text += std::to_string(c.size);
    text += '\n';
    size += c.size;
  }
  return {detail::blake3_keyed(kInternalNodeKey, std::as_bytes(std::span(text))), size};
}

// How many of the nodes starting at `rest` form the next group: 2 or fewer stay together; else the
// group ends after the first node from the third on whose hash's last word is divisible by 4, at 9
// nodes at most. Content decides the shape, so equal runs of chunks give equal subtrees.
std::size_t group_size(std::span<const HashedSize> rest) {
  if (rest.size() <= 2) return rest.size();
  const std::size_t end = std::min<std::size_t>(9, rest.size());
  for (std::size_t i = 2; i < end; ++i)
    if (rest[i].hash.word(3) % 4 == 0) return i + 1;
  return end;
}

Hash aggregated_root(std::span<const HashedSize> leaves) {
  if (leaves.empty()) return Hash{};
  std::vector<HashedSize> level(leaves.begin(), leaves.end());
  while (level.size() > 1) {
    std::vector<HashedSize> next;
    next.reserve(level.size() / 3 + 1);
    for (std::size_t at = 0; at < level.size();) {
      const std::size_t take = group_size(std::span(level).subspan(at));
      next.push_back(merge(std::span(level).subspan(at, take)));
      at += take;
    }
    level = std::move(next);
  }
  return level.front().hash;
}

}  // namespace

namespace detail {
Hash blake3_keyed(const Hash& key, std::span<const std::byte> message) {
  // BLAKE3's C code detects the CPU's SIMD features on first use into a plain global; hashing once
  // inside a thread-safe static first keeps threads that hash at once from racing on it.
  static const bool features_detected = [] {
    blake3_hasher warm;
    blake3_hasher_init(&warm);
    const std::vector<std::uint8_t> bytes(4096);
    blake3_hasher_update(&warm, bytes.data(), bytes.size());
    std::uint8_t out[32];
    blake3_hasher_finalize(&warm, out, sizeof out);
    return true;
  }();
  (void)features_detected;
  blake3_hasher hasher;
  blake3_hasher_init_keyed(&hasher, key.bytes.data());
  blake3_hasher_update(&hasher, message.data(), message.size());
  Hash out;
  blake3_hasher_finalize(&hasher, out.bytes.data(), out.bytes.size());
  return out;
}
}  // namespace detail

std::string Hash::str() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(64, '0');
  for (int group = 0; group < 4; ++group)
    for (int k = 0; k < 8; ++k) {
      const std::uint8_t b = bytes[group * 8 + 7 - k];
      out[group * 16 + k * 2] = kDigits[b >> 4];
      out[group * 16 + k * 2 + 1] = kDigits[b & 15];
    }
  return out;
}

std::uint64_t Hash::word(int k) const {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | bytes[k * 8 + i];
  return v;
}

bool Hash::is_zero() const {
  for (auto b : bytes)
    if (b != 0) return false;
  return true;
}

std::optional<Hash> parse_hash(std::string_view text) {
  if (text.size() != 64) return std::nullopt;
  Hash h;
  for (int group = 0; group < 4; ++group)
    for (int k = 0; k < 8; ++k) {
      const int hi = hex_value(text[group * 16 + k * 2]);
      const int lo = hex_value(text[group * 16 + k * 2 + 1]);
      if (hi < 0 || lo < 0) return std::nullopt;
      h.bytes[group * 8 + 7 - k] = static_cast<std::uint8_t>(hi * 16 + lo);
    }
  return h;
}

std::optional<Hash> hash_from_sha256_hex(std::string_view sha256_hex) { return parse_hash(sha256_hex); }

Hash chunk_hash(std::span<const std::byte> bytes) { return detail::blake3_keyed(kDataKey, bytes); }

Hash xorb_hash(std::span<const HashedSize> chunks) { return aggregated_root(chunks); }

Hash file_hash(std::span<const HashedSize> chunks) {
  if (chunks.empty()) return Hash{};
  const Hash root = aggregated_root(chunks);
  return detail::blake3_keyed(kFileKey, as_bytes(root));
}

Hash verification_hash(std::span<const Hash> chunk_hashes) {
  blake3_hasher hasher;
  blake3_hasher_init_keyed(&hasher, kVerificationKey.bytes.data());
  for (const auto& h : chunk_hashes) blake3_hasher_update(&hasher, h.bytes.data(), h.bytes.size());
  Hash out;
  blake3_hasher_finalize(&hasher, out.bytes.data(), out.bytes.size());
  return out;
}

Hash keyed_hash(const Hash& key, const Hash& chunk) { return detail::blake3_keyed(key, as_bytes(chunk)); }

}  // namespace khub::xet
