#pragma once
// A commit's tree listing in the cache, <repo folder>/trees/<commit>.json, as huggingface_hub's
// snapshot_download writes and reads it back (docs/protocol.md, Cache layout): a commit never
// changes, so its listing saves the tree request later and tells offline whether a snapshot is whole.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/hub/cache.h"
#include "khub/hub/hub_client.h"

namespace khub::hub {

/// The bytes huggingface_hub writes for `entries` (directories left out): format_version 1, files
/// sorted by path, JSON indented by one space, non-ASCII escaped, no final newline.
[[nodiscard]] std::string tree_listing_json(const std::vector<TreeEntry>& entries);

/// Writes trees/<commit>.json atomically. Like huggingface_hub it writes nothing (and succeeds)
/// when an entry's Xet hash is not 64 hex digits.
[[nodiscard]] Status write_tree_listing(const CacheLayout& cache, const RepoRef& repo, std::string_view commit,
                                        const std::vector<TreeEntry>& entries);

/// The files of the cached listing of `commit`, sorted by path; nullopt when none is cached or it is
/// one huggingface_hub ignores (another format_version, a bad Xet hash, not JSON) or khub cannot
/// trust (a path escaping the repo, a blob id that is no sha1 / sha256, more than kMaxDocumentBytes).
[[nodiscard]] std::optional<std::vector<TreeEntry>> read_tree_listing(const CacheLayout& cache, const RepoRef& repo,
                                                                      std::string_view commit);

/// What an offline whole-revision download finds, as snapshot_download offline: the files of the
/// cached snapshot; when the commit's listing is cached, every file it names must be there
/// (OfflineMiss naming the missing ones otherwise). OfflineMiss when the snapshot is not cached.
[[nodiscard]] Expected<std::vector<std::string>> offline_snapshot_files(const CacheLayout& cache, const RepoRef& repo,
                                                                        std::string_view commit);

}  // namespace khub::hub
