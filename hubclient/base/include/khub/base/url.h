#pragma once
// Percent-encoding as the Hub's URLs need it: shared by the client, the publisher and the server.
#include <string>
#include <string_view>

namespace khub {

/// Percent-encodes every byte except RFC 3986 unreserved characters (A–Z a–z 0–9 - . _ ~), and
/// '/' too unless `keep_slash` (a revision in one path segment: `refs/pr/1` → `refs%2Fpr%2F1`).
[[nodiscard]] std::string percent_encode(std::string_view text, bool keep_slash = false);

}  // namespace khub
