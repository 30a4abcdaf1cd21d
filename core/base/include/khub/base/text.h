#pragma once
// ASCII text helpers for protocol strings (header names, URL schemes and hosts, environment values).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace khub {

/// `text` with A–Z lowered; other bytes (UTF-8 included) unchanged.
[[nodiscard]] std::string ascii_lower(std::string_view text);
/// `text` without leading and trailing white space.
[[nodiscard]] std::string trim_space(std::string_view text);
/// A byte count or similar from untrusted text: ASCII digits only, at least one, at most 2^64 - 1;
/// nullopt otherwise (never throws, unlike std::stoull on a number too large).
[[nodiscard]] std::optional<std::uint64_t> parse_decimal_u64(std::string_view text);

}  // namespace khub
