#pragma once
// Files into the shared cache, as huggingface_hub's hf_hub_download does it (docs/protocol.md,
// Cache layout), with every downloaded blob checked against its etag before it is renamed into place.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/hub/cache.h"
#include "khub/hub/hub_client.h"

namespace khub::hub {

/// The cache layout a client writes to.
[[nodiscard]] CacheLayout cache_of(const HubClient& client);

/// Returns snapshots/<commit>/<path> for `revision` (branch, tag or commit), downloading when needed:
/// commit shortcut (no request) → HEAD → ref → existing pointer / blob → locked download, verified,
/// atomic rename → pointer. `expected` (from a tree listing) must agree with HEAD, else Integrity.
/// Offline: cache only (OfflineMiss). EntryNotFound leaves a .no_exist marker. When HEAD fails for
/// a transient reason the cached file is used if there is one.
[[nodiscard]] Expected<std::filesystem::path> fetch_file(HubClient& client, const RepoRef& repo,
                                                         std::string_view revision, std::string_view path,
                                                         const TreeEntry* expected = nullptr);

/// Fetches every file entry at `commit`, up to options().max_parallel_downloads at a time. Stops
/// starting new files after the first failure and returns that failure.
[[nodiscard]] Status fetch_files(HubClient& client, const RepoRef& repo, std::string_view commit,
                                 const std::vector<TreeEntry>& files);

}  // namespace khub::hub
