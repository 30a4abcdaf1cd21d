#pragma once
// The cache layout huggingface_hub, kernels, hf-hub and llama.cpp share (docs/protocol.md, Cache
// layout): pure path functions, plus the few I/O steps (refs, snapshot pointers, .no_exist markers).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/hub/repo.h"

namespace khub::hub {

class CacheLayout {
 public:
  explicit CacheLayout(std::filesystem::path root) : root_(std::move(root)) {}
  [[nodiscard]] const std::filesystem::path& root() const noexcept { return root_; }
  [[nodiscard]] std::filesystem::path repo_dir(const RepoRef& repo) const;
  [[nodiscard]] std::filesystem::path blob(const RepoRef& repo, std::string_view etag) const;
  [[nodiscard]] std::filesystem::path snapshot_dir(const RepoRef& repo, std::string_view commit) const;
  [[nodiscard]] std::filesystem::path snapshot_file(const RepoRef& repo, std::string_view commit,
                                                    std::string_view path) const;
  /// refs/<revision>; names with '/' nest (refs/refs/pr/1).
  [[nodiscard]] std::filesystem::path ref_file(const RepoRef& repo, std::string_view revision) const;
  [[nodiscard]] std::filesystem::path no_exist(const RepoRef& repo, std::string_view commit,
                                               std::string_view path) const;
  /// <repo folder>/.staging/: where pointers, copies, refs and markers are made before they are
  /// renamed into place, so that nothing walking snapshots/, refs/ or .no_exist/ (a digest check,
  /// huggingface_hub's scan_cache_dir) ever sees an in-flight temp name. Other clients ignore it.
  [[nodiscard]] std::filesystem::path staging_dir(const RepoRef& repo) const;
  /// <repo folder>/trees/<commit>.json: the commit's tree listing snapshot_download caches.
  [[nodiscard]] std::filesystem::path tree_listing(const RepoRef& repo, std::string_view commit) const;
  /// CACHEDIR.TAG at the root, which tells backup tools to skip the cache.
  [[nodiscard]] std::filesystem::path cachedir_tag() const { return root_ / "CACHEDIR.TAG"; }
  /// .locks/<repo folder>/<etag>.lock
  [[nodiscard]] std::filesystem::path lock_file(const RepoRef& repo, std::string_view etag) const;

 private:
  std::filesystem::path root_;
};

/// The commit a cached ref names (whitespace trimmed), or nullopt when there is no such ref.
[[nodiscard]] std::optional<std::string> read_ref(const CacheLayout& cache, const RepoRef& repo,
                                                  std::string_view revision);
/// Writes refs/<revision> (commit, no newline) atomically, only when it changes.
[[nodiscard]] Status write_ref(const CacheLayout& cache, const RepoRef& repo, std::string_view revision,
                               std::string_view commit);
/// Commit for a revision from the cache alone: the revision itself when it is a commit, else its ref.
[[nodiscard]] std::optional<std::string> cached_commit(const CacheLayout& cache, const RepoRef& repo,
                                                       std::string_view revision);
/// Points snapshots/<commit>/<path> at blobs/<etag> with a relative symlink (or a copy when
/// `copy` is set or symlinks fail), made in staging_dir() and renamed into place: the snapshot
/// only ever holds complete pointers, whatever other processes do at the same time.
[[nodiscard]] Status link_snapshot_file(const CacheLayout& cache, const RepoRef& repo, std::string_view commit,
                                        std::string_view path, std::string_view etag, bool copy);
/// Writes CACHEDIR.TAG (huggingface_hub's bytes) atomically when the root has none; huggingface_hub
/// does so each time it is about to link a new snapshot file.
[[nodiscard]] Status tag_cache_dir(const CacheLayout& cache, const RepoRef& repo);
/// Creates the empty .no_exist/<commit>/<path> marker.
[[nodiscard]] Status mark_missing(const CacheLayout& cache, const RepoRef& repo, std::string_view commit,
                                  std::string_view path);
/// Repo-relative paths of the files snapshots/<commit>/ holds (pointers whose blob is present, or
/// copies), sorted; OfflineMiss when that snapshot is not cached.
[[nodiscard]] Expected<std::vector<std::string>> cached_snapshot_files(const CacheLayout& cache, const RepoRef& repo,
                                                                       std::string_view commit);
/// Versions N with a refs/v<N> file, ascending.
[[nodiscard]] std::vector<int> cached_versions(const CacheLayout& cache, const RepoRef& repo);

/// Parses a version branch `v<digits>`, ASCII digits only (Python's int() is looser); nullopt otherwise.
[[nodiscard]] std::optional<int> parse_version_branch(std::string_view name);

}  // namespace khub::hub
