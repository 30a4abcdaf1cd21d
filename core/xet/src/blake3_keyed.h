#pragma once
// The one call into the BLAKE3 C library: keyed hashing with a 32-byte output.
#include <cstddef>
#include <span>

#include "khub/xet/hash.h"

namespace khub::xet::detail {
[[nodiscard]] Hash blake3_keyed(const Hash& key, std::span<const std::byte> message);
}  // namespace khub::xet::detail
