#pragma once
// The Hub's repo types and how each appears in URLs and cache folders: one table for the client,
// the publisher and the server.
#include <optional>
#include <string_view>

namespace khub {

enum class RepoType { Model, Dataset, Space, Kernel };

/// "model", "dataset", "space", "kernel" (the `type` of API bodies) → the type; nullopt otherwise.
[[nodiscard]] std::optional<RepoType> repo_type_from_name(std::string_view name) noexcept;
/// "models", "datasets", "spaces", "kernels" (the /api/<segment>/ part) → the type; nullopt otherwise.
[[nodiscard]] std::optional<RepoType> repo_type_from_segment(std::string_view segment) noexcept;
/// "model", "dataset", "space", "kernel".
[[nodiscard]] std::string_view to_string(RepoType type) noexcept;
/// "models", "datasets", "spaces", "kernels".
[[nodiscard]] std::string_view api_segment(RepoType type) noexcept;
/// The prefix of web and resolve URLs: "", "datasets/", "spaces/", "kernels/".
[[nodiscard]] std::string_view url_prefix(RepoType type) noexcept;
/// The prefix of a repo's cache folder: "models--", "datasets--", "spaces--", "kernels--".
[[nodiscard]] std::string_view cache_prefix(RepoType type) noexcept;

}  // namespace khub
