#pragma once
// Inputs shared by the xet tests: the published vectors' inputs and generated data.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace khub::xet::testing {

/// The LCG input of the published vectors: x = x * 6364136223846793005 + 1442695040888963407, byte = x >> 56.
inline std::vector<std::byte> lcg_bytes(std::size_t n, std::uint64_t seed = 0) {
  std::vector<std::byte> out(n);
  std::uint64_t x = seed;
  for (auto& b : out) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    b = static_cast<std::byte>(x >> 56);
  }
  return out;
}

inline std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s)); }

}  // namespace khub::xet::testing
