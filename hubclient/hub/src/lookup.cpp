// A repo named by id: its type with the model fallback, the default revision, and the summaries of
// `khub info` and `khub versions`.
#include "khub/hub/lookup.h"

#include <algorithm>

#include "khub/hub/cache.h"
#include "khub/hub/cache_tree.h"
#include "khub/hub/download.h"
#include "khub/variants/resolve.h"

namespace khub::hub {

Expected<RepoRef> lookup_repo(const RepoLookup& lookup) {
  return make_repo(lookup.repo_id, lookup.type.value_or(RepoType::Kernel));
}

Expected<RepoVersions> find_versions(HubClient& client, const RepoLookup& lookup) {
  KHUB_TRY(RepoRef repo, lookup_repo(lookup));
  KHUB_TRY(auto versions,
           with_model_fallback(repo, !lookup.type, [&](const RepoRef& r) { return list_versions(client, r); }));
  return RepoVersions{std::move(repo), std::move(versions)};
}

Expected<RepoRevision> choose_revision(HubClient& client, const RepoLookup& lookup) {
  if (lookup.version && !lookup.revision.empty())
    return Error(ErrorCode::InvalidArgument, "Only one of `revision` or `version` must be specified.");
  RepoRevision out;
  out.version = lookup.version;
  out.revision = lookup.revision;
  if (out.version || !out.revision.empty() || lookup.when_unnamed == RepoLookup::Default::Main) {
    KHUB_TRY(out.repo, lookup_repo(lookup));
    if (!out.version && out.revision.empty()) out.revision = "main";
    return out;
  }
  KHUB_TRY(auto found, find_versions(client, lookup));
  out.repo = std::move(found.repo);
  if (found.versions.empty()) out.revision = "main";  // a repo without v<N> branches
  else out.version = found.versions.back().version;
  return out;
}

Status find_commit(HubClient& client, RepoRevision& at, bool model_fallback) {
  KHUB_TRY(at.commit, with_model_fallback(at.repo, model_fallback, [&](RepoRef& r) {
             return resolve_commit(client, r, at.version, at.revision);
           }));
  return {};
}

Expected<RepoRevision> find_revision(HubClient& client, const RepoLookup& lookup) {
  KHUB_TRY(RepoRevision out, choose_revision(client, lookup));
  KHUB_CHECK(find_commit(client, out, !lookup.type));
  return out;
}

Expected<KernelRequest> kernel_request(HubClient& client, const RepoLookup& lookup) {
  KHUB_TRY(RepoRevision at, choose_revision(client, lookup));
  KernelRequest request;
  request.repo_id = lookup.repo_id;
  request.options.version = at.version;
  if (!at.version) request.options.revision = at.revision;
  if (lookup.type || at.repo.type == RepoType::Model) request.repo_type = at.repo.type;
  return request;
}

Expected<std::vector<std::string>> download_files(HubClient& client, const RepoRef& repo, std::string_view commit,
                                                  const std::vector<std::string>& paths, bool all) {
  if (!all) {
    for (const auto& p : paths) KHUB_CHECK(fetch_file(client, repo, commit, p));
    return paths;
  }
  const CacheLayout cache = cache_of(client);
  if (client.options().offline) return offline_snapshot_files(cache, repo, commit);
  // As snapshot_download: a commit's listing never changes, so a cached one saves the request, and
  // a fresh one is cached before the files (best effort there too: the download does not need it).
  auto tree = read_tree_listing(cache, repo, commit);
  const bool cached_listing = tree.has_value();
  if (!tree) {
    KHUB_TRY(tree, client.list_tree(repo, commit, "", true));
    (void)write_tree_listing(cache, repo, commit, *tree);
  }
  if (auto fetched = fetch_files(client, repo, commit, *tree); !fetched) {
    // A cached listing the Hub's answers contradict would fail every later call the same way: it
    // goes, and the next call lists the commit again.
    std::error_code ec;
    if (cached_listing && fetched.error().code == ErrorCode::Integrity)
      std::filesystem::remove(cache.tree_listing(repo, commit), ec);
    return std::move(fetched).error();
  }
  std::vector<std::string> files;
  for (const auto& e : *tree)
    if (!e.directory) files.push_back(e.path);
  return files;
}

std::optional<std::string> host_variant(const std::vector<std::string>& names, const variants::HostInfo& host) {
  auto resolved = variants::resolve_variants(names, host);
  const auto* pick = variants::first_loadable(resolved);
  if (!pick) return std::nullopt;
  return pick->name;
}

Expected<KernelSummary> summarize_kernel(HubClient& client, const RepoLookup& lookup, const variants::HostInfo& host) {
  KernelSummary out;
  KHUB_TRY(out.at, find_revision(client, lookup));
  const RepoRef& repo = out.at.repo;
  KHUB_TRY(out.variants, list_variant_names(client, repo, out.at.commit));
  out.host_variant = hub::host_variant(out.variants, host);
  if (!client.options().offline) {
    auto trusted = client.is_trusted_publisher(repo.id.substr(0, repo.id.find('/')));
    out.trusted_publisher = !trusted ? PublisherTrust::Unknown
                            : *trusted ? PublisherTrust::Trusted
                                       : PublisherTrust::Untrusted;
  }
  if (out.host_variant) {
    KHUB_TRY(auto file, fetch_file(client, repo, out.at.commit, "build/" + *out.host_variant + "/metadata.json"));
    KHUB_TRY(out.metadata, protocol::read_metadata(file));
  }
  return out;
}

Expected<KernelVersions> summarize_versions(HubClient& client, const RepoLookup& lookup,
                                            const variants::HostInfo& host) {
  KHUB_TRY(auto found, find_versions(client, lookup));
  KernelVersions out{std::move(found.repo), {}};
  for (const auto& v : found.versions) {
    KHUB_TRY(auto names, list_variant_names(client, out.repo, v.commit));
    // Folders whose names are no variant are left out, as `kernels versions` leaves them out.
    std::erase_if(names, [](const std::string& n) { return !variants::parse_variant(n); });
    auto pick = host_variant(names, host);
    out.versions.push_back({v.version, v.commit, std::move(names), std::move(pick)});
  }
  return out;
}

}  // namespace khub::hub
