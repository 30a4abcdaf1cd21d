#pragma once
// ASCII text helpers for protocol strings (header names, URL schemes and hosts, environment values).
#include <string>
#include <string_view>

namespace khub {

/// `text` with A–Z lowered; other bytes (UTF-8 included) unchanged.
[[nodiscard]] std::string ascii_lower(std::string_view text);
/// `text` without leading and trailing white space.
[[nodiscard]] std::string trim_space(std::string_view text);

}  // namespace khub
