#pragma once
// Repo identity and URL shapes (docs/protocol.md, Endpoints and repo types): kernel repos first,
// model repos as fallback.
#include <string>
#include <string_view>

#include "khub/base/error.h"
#include "khub/base/repo_type.h"

namespace khub::hub {

using khub::RepoType;  // the client reads kernel repos, and model repos as a fallback

struct RepoRef {
  RepoType type = RepoType::Kernel;
  std::string id;  // namespace/name
  friend bool operator==(const RepoRef&, const RepoRef&) = default;
};

/// Checks `namespace/name` (one '/', no empty part, no '..', letters, digits, '-', '_', '.');
/// InvalidArgument otherwise.
[[nodiscard]] Expected<RepoRef> make_repo(std::string_view repo_id, RepoType type = RepoType::Kernel);
/// The repo types the client reads: "kernel(s)" or "model(s)"; InvalidArgument otherwise.
[[nodiscard]] Expected<RepoType> parse_repo_type(std::string_view text);
/// `kernels--org--name` / `models--org--name`.
[[nodiscard]] std::string repo_folder_name(const RepoRef& repo);

/// Percent-encodes everything but RFC 3986 unreserved characters ('/' becomes %2F).
[[nodiscard]] std::string encode_segment(std::string_view text);
/// Encodes each '/'-separated segment, keeping the '/'.
[[nodiscard]] std::string encode_path(std::string_view path);

/// `{endpoint}/{prefix}{repo}/resolve/{rev}/{path}`.
[[nodiscard]] std::string resolve_url(std::string_view endpoint, const RepoRef& repo, std::string_view revision,
                                      std::string_view path);
/// `{endpoint}/api/{segment}/{repo}` + suffix.
[[nodiscard]] std::string api_url(std::string_view endpoint, const RepoRef& repo, std::string_view suffix = {});

/// A repo-relative path that stays inside the repo: not empty, not absolute, no '.', '..' or empty
/// component, no backslash, no NUL.
[[nodiscard]] bool is_safe_repo_path(std::string_view path) noexcept;

}  // namespace khub::hub
