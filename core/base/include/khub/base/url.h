#pragma once
// URLs as the Hub uses them (percent-encoding, names, origins, relative links): shared by the
// client, the publisher and the server.
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

/// "scheme://host[:port]" of a URL, lower-cased; empty for a relative URL.
[[nodiscard]] std::string url_origin(std::string_view url);
/// Whether `url` starts with a scheme ("https://…"); "/a?next=http://x" is relative.
[[nodiscard]] bool has_scheme(std::string_view url);
/// Whether url is http:// or https:// (any case): the only schemes khub follows or sends.
[[nodiscard]] bool is_http_url(std::string_view url);
/// Resolves a Location or Link target against the URL it came from.
[[nodiscard]] std::string join_url(std::string_view base, std::string_view location);

}  // namespace khub
