// Versions (branches v<N>), revisions and the kernel-status.toml redirect.
#include <toml++/toml.h>

#include <algorithm>
#include <map>

#include "kernel_internal.h"
#include "khub/base/hash.h"
#include "khub/hub/download.h"

namespace khub::hub {

Expected<std::vector<VersionInfo>> list_versions(HubClient& client, const RepoRef& repo) {
  std::vector<VersionInfo> out;
  if (client.options().offline) {
    CacheLayout cache = cache_of(client);
    std::error_code ec;
    if (!std::filesystem::is_directory(cache.repo_dir(repo), ec))
      return Error(ErrorCode::OfflineMiss,
                   repo.id + " is not in the local cache (" + cache.root().string() + ") and Hugging Face Hub is in "
                   "offline mode", "download it while online first (`khub download " + repo.id + " --version N`)");
    for (int v : cached_versions(cache, repo))
      out.push_back({v, read_ref(cache, repo, "v" + std::to_string(v)).value_or("")});
    return out;
  }
  KHUB_TRY(auto refs, client.list_refs(repo));
  std::map<int, std::string> by_version;  // later duplicates (server order) win
  for (const auto& b : refs.branches)
    if (auto n = parse_version_branch(b.name)) by_version[*n] = b.target_commit;
  for (auto& [v, c] : by_version) out.push_back({v, c});
  return out;
}

namespace detail {

namespace {
std::string join_versions(const std::vector<VersionInfo>& versions) {
  std::string out;
  for (const auto& v : versions) out += (out.empty() ? "" : ", ") + std::to_string(v.version);
  return out;
}
}  // namespace

Expected<std::string> resolve_version(HubClient& client, RepoRef& repo, int version,
                                      std::vector<std::string>& warnings) {
  const std::string branch = "v" + std::to_string(version);
  CacheLayout cache = cache_of(client);
  if (client.options().offline) {
    for (RepoType type : {repo.type, repo.type == RepoType::Kernel ? RepoType::Model : RepoType::Kernel}) {
      RepoRef r{type, repo.id};
      if (auto commit = read_ref(cache, r, branch)) {
        repo = r;
        return *commit;
      }
    }
    return Error(ErrorCode::OfflineMiss,
                 "Version " + std::to_string(version) + " of '" + repo.id +
                     "' is not available in the local cache and Hugging Face Hub is in offline mode. Download the "
                     "kernel while online first, or pass an explicit `revision=<commit>`.",
                 "run `khub download " + repo.id + " --version " + std::to_string(version) + "` while online");
  }
  KHUB_TRY(auto versions, list_versions(client, repo));
  auto it = std::find_if(versions.begin(), versions.end(), [&](const VersionInfo& v) { return v.version == version; });
  if (it == versions.end())
    return Error(ErrorCode::RevisionNotFound,
                 "Version " + std::to_string(version) + " not found, available versions: " + join_versions(versions),
                 "pick one of the available versions (`khub versions " + repo.id + "`)");
  if (!versions.empty() && versions.back().version > version)
    warnings.push_back("You are using version " + std::to_string(version) + " of '" + repo.id +
                       "', but version " + std::to_string(versions.back().version) + " is available.");
  KHUB_CHECK(write_ref(cache, repo, branch, it->commit));
  return it->commit;
}

Expected<std::string> resolve_revision(HubClient& client, const RepoRef& repo, std::string_view revision) {
  if (revision.size() == 40 && is_hex(revision)) return std::string(revision);
  CacheLayout cache = cache_of(client);
  if (client.options().offline) {
    if (auto commit = read_ref(cache, repo, revision)) return *commit;
    return Error(ErrorCode::OfflineMiss,
                 "Cannot find a local snapshot for " + repo.id + " (revision: " + std::string(revision) +
                     "). When Hugging Face Hub is in offline mode the kernel must already be present in the local "
                     "cache.",
                 "download it while online first (`khub download " + repo.id + " --revision " +
                     std::string(revision) + "`)");
  }
  // An unreachable or failing Hub falls back to the cached ref, as huggingface_hub does:
  // one attempt when the ref is cached, the usual retries when it is not. A
  // Hub that answers "no such revision" does not fall back.
  const auto cached = read_ref(cache, repo, revision);
  auto commit = client.revision_commit(repo, revision, !cached);
  if (!commit) {
    const auto code = commit.error().code;
    if (cached && (code == ErrorCode::Network || code == ErrorCode::RateLimited)) return *cached;
    return std::move(commit).error();
  }
  KHUB_CHECK(write_ref(cache, repo, revision, *commit));
  return *commit;
}

Expected<std::optional<StatusRedirect>> parse_kernel_status(std::string_view text) {
  toml::table table;
  try {
    table = toml::parse(text);
  } catch (const toml::parse_error& e) {
    return Error(ErrorCode::InvalidMetadata, std::string("kernel-status.toml is not valid TOML: ") +
                                                 std::string(e.description()));
  }
  auto kind = table["kind"].value<std::string>();
  if (!kind || kind->empty())
    return Error(ErrorCode::InvalidMetadata, "kernel-status.toml must contain a 'kind' field");
  if (*kind != "redirect") return Error(ErrorCode::InvalidMetadata, "Unknown kernel status kind: '" + *kind + "'");
  auto destination = table["destination"].value<std::string>();
  if (!destination || destination->empty())
    return Error(ErrorCode::InvalidMetadata, "kernel-status.toml must contain a 'destination' field");
  StatusRedirect r;
  r.destination = *destination;
  if (auto rev = table["revision"].value<std::string>(); rev && !rev->empty()) r.revision = *rev;
  return std::optional<StatusRedirect>(r);
}

}  // namespace detail
}  // namespace khub::hub
