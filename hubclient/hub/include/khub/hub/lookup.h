#pragma once
// A repo named by id, as a person names it on a command line, and what is in it: its type (a kernel
// repo; when none has that id, a legacy model-type repo of the same id), the revision to look at
// when none is named (the newest version), and the summaries `khub info` / `khub versions` show.
#include <optional>
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/hub/hub_client.h"
#include "khub/hub/kernel_fetch.h"
#include "khub/hub/repo.h"
#include "khub/protocol/metadata.h"
#include "khub/variants/host.h"

namespace khub::hub {

/// A repo named by id and what to look at in it.
struct RepoLookup {
  std::string repo_id;
  std::optional<RepoType> type;  // nullopt: kernel, a missing one retried as a legacy model repo
  std::optional<int> version;    // branch v<N>; at most one of version / revision
  std::string revision;          // branch, tag or commit
  /// With neither version nor revision: the newest version (main when the repo has no v<N>
  /// branch), or main.
  enum class Default { NewestVersion, Main } when_unnamed = Default::NewestVersion;
};

/// The revision a RepoLookup found.
struct RepoRevision {
  RepoRef repo;                // of the type that answered
  std::optional<int> version;  // exactly one of version / revision is set
  std::string revision;
  std::string commit;          // empty from choose_revision
  /// "v<N>" or the revision.
  [[nodiscard]] std::string name() const { return version ? "v" + std::to_string(*version) : revision; }
};

/// `lookup(repo)`; when `fallback`, a kernel repo that is missing (RepoNotFound, or OfflineMiss: not
/// in the cache) is retried as the model repo of the same id (legacy model-type kernel repos), and
/// `repo` is switched to it. When the model repo is missing too, the kernel repo's error is
/// returned and `repo` stays the kernel repo.
template <typename Lookup>
auto with_model_fallback(RepoRef& repo, bool fallback, Lookup&& lookup) -> decltype(lookup(repo)) {
  auto result = lookup(repo);
  if (result || !fallback || repo.type != RepoType::Kernel) return result;
  const ErrorCode code = result.error().code;
  if (code != ErrorCode::RepoNotFound && code != ErrorCode::OfflineMiss) return result;
  const Error first = result.error();
  repo.type = RepoType::Model;
  result = lookup(repo);
  if (!result && result.error().code == code) {  // neither: the kernel repo's error says it best
    repo.type = RepoType::Kernel;
    return first;
  }
  return result;
}

/// The repo `lookup` names, of its type (kernel when it names none); InvalidArgument for a bad id.
[[nodiscard]] Expected<RepoRef> lookup_repo(const RepoLookup& lookup);

struct RepoVersions {
  RepoRef repo;  // of the type that answered
  std::vector<VersionInfo> versions;
};

/// list_versions of the repo `lookup` names, with the model fallback.
[[nodiscard]] Expected<RepoVersions> find_versions(HubClient& client, const RepoLookup& lookup);

/// The version or revision `lookup` names, else its default (the newest version needs the repo's
/// versions, with the model fallback). No commit.
[[nodiscard]] Expected<RepoRevision> choose_revision(HubClient& client, const RepoLookup& lookup);

/// Sets `at.commit` to the commit of its version or revision (resolve_commit), with the model
/// fallback when `model_fallback` (the lookup named no type); `at.repo` names the type that answered.
[[nodiscard]] Status find_commit(HubClient& client, RepoRevision& at, bool model_fallback);

/// choose_revision, then find_commit.
[[nodiscard]] Expected<RepoRevision> find_revision(HubClient& client, const RepoLookup& lookup);

/// The fetch_kernel request for `lookup`: its version or revision (as choose_revision chooses) and a
/// repo type when the lookup names one or only a legacy model repo answered. Trust and signature
/// settings are left at their defaults.
[[nodiscard]] Expected<KernelRequest> kernel_request(HubClient& client, const RepoLookup& lookup);

/// Downloads `paths` of `repo` at `commit`, or with `all` every file of the revision, as
/// huggingface_hub's snapshot_download: the commit's tree listing from the cache (trees/<commit>.json)
/// or the Hub (then cached); offline, what the cached snapshot holds, which must be every file of a
/// cached listing (offline_snapshot_files). Returns the files: `paths`, or the revision's files.
[[nodiscard]] Expected<std::vector<std::string>> download_files(HubClient& client, const RepoRef& repo,
                                                                std::string_view commit,
                                                                const std::vector<std::string>& paths, bool all);

/// The variant `host` would load among `names` (first_loadable of the resolution); nullopt when none fits.
[[nodiscard]] std::optional<std::string> host_variant(const std::vector<std::string>& names,
                                                      const variants::HostInfo& host);

/// Whether the Hub marks a repo's publisher as trusted.
enum class PublisherTrust {
  NotAsked,  // offline
  Unknown,   // the Hub did not say
  Trusted,
  Untrusted,
};

/// What `khub info` shows of one revision.
struct KernelSummary {
  RepoRevision at;
  PublisherTrust trusted_publisher = PublisherTrust::NotAsked;
  std::vector<std::string> variants;                  // folder names under build/
  std::optional<std::string> host_variant;            // the one the host would load
  std::optional<protocol::KernelMetadata> metadata;   // host_variant's metadata.json
};

/// find_revision, the variants at its commit, the publisher's trust (online), the host's variant
/// and its metadata.json.
[[nodiscard]] Expected<KernelSummary> summarize_kernel(HubClient& client, const RepoLookup& lookup,
                                                       const variants::HostInfo& host);

/// One version as `khub versions` shows it.
struct VersionSummary {
  int version = 0;
  std::string commit;
  std::vector<std::string> variants;        // only names that parse as variants, as `kernels versions`
  std::optional<std::string> host_variant;  // the one the host would load
};

struct KernelVersions {
  RepoRef repo;  // of the type that answered
  std::vector<VersionSummary> versions;  // ascending
};

/// find_versions, then the variants of each version and the host's pick among them.
[[nodiscard]] Expected<KernelVersions> summarize_versions(HubClient& client, const RepoLookup& lookup,
                                                          const variants::HostInfo& host);

}  // namespace khub::hub
