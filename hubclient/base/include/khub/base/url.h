#pragma once
// Percent-encoding as the Hub's URLs need it: shared by the client, the publisher and the server.
#include <string>
#include <string_view>

namespace khub {

/// Percent-encodes every byte except RFC 3986 unreserved characters (A–Z a–z 0–9 - . _ ~), and
/// '/' too unless `keep_slash` (a revision in one path segment: `refs/pr/1` → `refs%2Fpr%2F1`).
[[nodiscard]] std::string percent_encode(std::string_view text, bool keep_slash = false);

/// A Hub namespace or repo name: 1-96 of [A-Za-z0-9._-], not starting or ending with '.' or '-',
/// no "--" or ".." (huggingface_hub's validate_repo_id; the server refuses others).
[[nodiscard]] bool is_valid_repo_name(std::string_view name);
/// A branch or tag name as git check-ref-format takes it (roughly), not starting with refs/.
[[nodiscard]] bool is_valid_ref_name(std::string_view name);

}  // namespace khub
