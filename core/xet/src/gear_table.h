#pragma once
#include <array>
#include <cstdint>

namespace khub::xet::detail {
extern const std::array<std::uint64_t, 256> kGearTable;
}  // namespace khub::xet::detail
