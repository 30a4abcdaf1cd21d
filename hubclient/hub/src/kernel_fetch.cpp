// get_kernel without torch: the request sequence in docs/protocol.md (Kernel repositories), memoised
// per client.
#include "khub/hub/kernel_fetch.h"

#include <map>
#include <mutex>
#include <optional>

#include "kernel_internal.h"
#include "khub/base/fs.h"
#include "khub/hub/download.h"
#include "khub/protocol/digest.h"
#include "khub/protocol/metadata.h"

namespace khub::hub {
namespace fs = std::filesystem;

Expected<std::vector<std::string>> list_variant_names(HubClient& client, const RepoRef& repo,
                                                      std::string_view commit) {
  std::vector<std::string> names;
  if (client.options().offline) {
    std::error_code ec;
    fs::path build = cache_of(client).snapshot_dir(repo, commit) / "build";
    for (const auto& e : fs::directory_iterator(build, ec))
      if (e.is_directory(ec)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  auto tree = client.list_tree(repo, commit, "build", false);
  if (!tree) {
    if (tree.error().code == ErrorCode::EntryNotFound) return names;  // no build/ at all
    return std::move(tree).error();
  }
  for (const auto& e : *tree)
    if (e.directory && e.path.rfind("build/", 0) == 0 && e.path.find('/', 6) == std::string::npos)
      names.push_back(e.path.substr(6));
  return names;
}

Expected<std::vector<TreeEntry>> list_variant_files(HubClient& client, const RepoRef& repo, std::string_view commit,
                                                    std::string_view variant) {
  const std::string prefix = "build/" + std::string(variant) + "/";
  KHUB_TRY(auto tree, client.list_tree(repo, commit, prefix.substr(0, prefix.size() - 1), true));
  std::vector<TreeEntry> files;
  for (auto& e : tree) {
    if (e.path.rfind(prefix, 0) != 0)
      return Error(ErrorCode::Protocol, "tree listing of " + prefix + " in " + repo.id + " names '" + e.path +
                                            "', outside the variant", "the server is not trustworthy; nothing was written");
    if (e.directory || protocol::is_bytecode_cache(std::string_view(e.path).substr(prefix.size()))) continue;
    files.push_back(std::move(e));
  }
  return files;
}

namespace {

struct Memo {
  RepoRef repo;
  std::string commit;
  std::vector<std::string> variants;
  std::vector<std::string> warnings;
};

std::mutex& memo_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, Memo>& memos() {
  static std::map<std::string, Memo> m;
  return m;
}

// Listings at a commit never change: keep them for the process.
std::map<std::string, std::vector<TreeEntry>>& listings() {
  static std::map<std::string, std::vector<TreeEntry>> m;
  return m;
}

// A cached file that cannot be parsed (a hostile or broken Hub sent it) is not kept, pointer and
// blob: a later run, offline too, would meet it again.
template <class T>
Expected<T> forget_unless_parsed(const std::filesystem::path& cached, Expected<T> parsed) {
  if (!parsed) detail::delete_cached_file(cached);
  return parsed;
}

std::string memo_key(const HubClient& client, const KernelRequest& r, RepoType type) {
  return std::to_string(client.instance_id()) + "|" + std::string(to_string(type)) + "|" + r.repo_id + "|" +
         (r.options.version ? "v" + std::to_string(*r.options.version) : "@" + r.options.revision) + (r.follow_redirect ? "" : "|pinned");
}

Status check_trust(HubClient& client, const KernelRequest& request, std::vector<std::string>& warnings) {
  if (request.options.trust_remote_code) return {};
  return detail::check_publisher_trust(client, request.repo_id, warnings);
}

// Steps 2–4: commit (version or revision), redirect, variant names.
Expected<Memo> locate(HubClient& client, const KernelRequest& request, RepoType type) {
  Memo m;
  m.repo = RepoRef{type, request.repo_id};
  std::string revision = request.options.revision;
  if (request.options.version) {
    KHUB_TRY(m.commit, detail::resolve_version(client, m.repo, *request.options.version, m.warnings));
  } else {
    KHUB_TRY(m.commit, detail::resolve_revision(client, m.repo, revision));
  }
  if (!client.options().offline && request.follow_redirect) {
    auto status = fetch_file(client, m.repo, m.commit, "kernel-status.toml");
    if (status) {
      KHUB_TRY(auto text, read_file(*status));
      KHUB_TRY(auto redirect, forget_unless_parsed(*status, detail::parse_kernel_status(text)));
      if (redirect) {
        KHUB_TRY(auto dest, make_repo(redirect->destination, m.repo.type));
        m.warnings.push_back("'" + m.repo.id + "' redirected to '" + dest.id + "'");
        m.repo = dest;
        KHUB_TRY(m.commit, detail::resolve_revision(client, m.repo, redirect->revision));
      }
    } else if (status.error().code != ErrorCode::EntryNotFound && status.error().code != ErrorCode::RepoNotFound) {
      return std::move(status).error();
    }
  }
  KHUB_TRY(m.variants, list_variant_names(client, m.repo, m.commit));
  return m;
}

// After a failed variant choice (best effort, as kernels' _latest_compatible_version_suggestion):
// when the newest version has a build for this host, say so.
void suggest_newest_version(HubClient& client, const RepoRef& repo, const variants::HostInfo& host,
                            variants::NativeRuntime runtime, Error& e) {
  auto versions = list_versions(client, repo);
  if (!versions || versions->empty()) return;
  const VersionInfo& newest = versions->back();
  auto names = list_variant_names(client, repo, newest.commit);
  if (!names) return;
  variants::Resolution resolution;
  auto variant = detail::choose_variant(*names, host, repo.id, resolution, runtime);
  if (!variant) return;
  const std::string v = "v" + std::to_string(newest.version);
  e.note("However, version " + v + " of '" + repo.id + "' has a build compatible with your system (" + *variant +
         "). Consider upgrading to that version by specifying the `version` argument.");
  e.hint = "version " + v + " has a build for this host: ask for version " + std::to_string(newest.version);
}

}  // namespace

Status detail::check_publisher_trust(HubClient& client, const std::string& repo_id,
                                     std::vector<std::string>& warnings) {
  if (client.options().offline) {
    warnings.push_back("Skipping publisher trust check for '" + repo_id +
                       "' because Hugging Face Hub is in offline mode.");
    return {};
  }
  auto trusted = client.is_trusted_publisher(repo_id.substr(0, repo_id.find('/')));
  const std::string hint =
      "to load it anyway set GetKernelOptions::trust_remote_code = true (`khub lock`: --trust-remote-code)";
  if (!trusted)
    return Error(ErrorCode::Untrusted, "Kernel repository '" + repo_id +
                                           "' could not verify publisher trust status. Set trust_remote_code=True to "
                                           "allow loading kernels from untrusted sources.", hint)
        .note(trusted.error().message);
  if (!*trusted)
    return Error(ErrorCode::Untrusted, "Kernel repository '" + repo_id +
                                           "' is not from a trusted publisher. Set trust_remote_code=True to allow "
                                           "loading kernels from untrusted sources.", hint);
  return {};
}

Expected<FetchedKernel> locate_kernel(HubClient& client, const variants::HostInfo& detected,
                                      const KernelRequest& request) {
  if (request.options.version && !request.options.revision.empty())
    return Error(ErrorCode::InvalidArgument, "Only one of `revision` or `version` must be specified.");
  if (!request.options.version && request.options.revision.empty())
    return Error(ErrorCode::InvalidArgument,
                 "A kernel version or revision must be specified. Use `version=<major>` for a stable kernel API "
                 "version or `revision=<branch/tag/commit>` for an explicit Hub revision. See: "
                 "https://huggingface.co/docs/kernels/migration");
  KHUB_TRY(auto requested, make_repo(request.repo_id));
  variants::HostInfo host = detected;
  if (!request.options.backend.empty()) {
    KHUB_TRY(host, variants::with_backend(detected, request.options.backend));
  }
  FetchedKernel k;
  k.revision = request.options.version ? "v" + std::to_string(*request.options.version) : request.options.revision;
  KHUB_CHECK(check_trust(client, request, k.warnings));

  // Steps 2–4 (refs, kernel-status.toml, build/ listing), memoised per client: many ranks must
  // not repeat them.
  RepoType type = request.repo_type.value_or(RepoType::Kernel);
  Memo memo;
  const bool online = !client.options().offline;
  {
    std::lock_guard<std::mutex> g(memo_mutex());
    auto it = memos().find(memo_key(client, request, type));
    if (online && it != memos().end()) memo = it->second;
  }
  if (memo.commit.empty()) {
    auto located = locate(client, request, type);
    if (!located && online && !request.repo_type && located.error().code == ErrorCode::RepoNotFound) {
      // Legacy model-type kernel repos (removed from the Hub on 2026-09-13).
      auto legacy = locate(client, request, RepoType::Model);
      if (legacy) {
        legacy->warnings.push_back("'" + request.repo_id + "' is a model-type repo; kernel repos are type `kernel`" +
                                   " (model-type kernel repos are being removed from the Hub)");
        located = std::move(legacy);
      }
    }
    if (!located) return std::move(located).error();
    memo = std::move(*located);
    if (online) {
      std::lock_guard<std::mutex> g(memo_mutex());
      memos()[memo_key(client, request, type)] = memo;
    }
  }
  k.repo = memo.repo;
  k.commit = memo.commit;
  if (memo.repo.id != request.repo_id) {  // kernel-status.toml redirected: its publisher must be trusted too
    KernelRequest destination = request;
    destination.repo_id = memo.repo.id;
    KHUB_CHECK(check_trust(client, destination, k.warnings));
  }
  k.warnings.insert(k.warnings.end(), memo.warnings.begin(), memo.warnings.end());
  if (!online && memo.variants.empty())
    return Error(ErrorCode::OfflineMiss,
                 "Cannot find a local snapshot for " + k.repo.id + " (revision: " + k.revision +
                     "). When Hugging Face Hub is in offline mode the kernel must already be present in the local "
                     "cache.",
                 "download it while online first (`khub download " + k.repo.id + "`)");
  // As kernels names it: the commit a version resolved to, or the revision as asked.
  const std::string where = k.repo.id + " (revision: " + (request.options.version ? k.commit : k.revision) + ")";
  for (const auto& name : memo.variants)
    if (!variants::parse_variant(name))
      k.warnings.push_back("Repository " + where + " contains invalid build variant variant: '" + name + "'");
  auto chosen = detail::choose_variant(memo.variants, host, where, k.resolution, request.runtime);
  if (!chosen && request.python_only_ok && chosen.error().code == ErrorCode::NoVariant && k.resolution.chosen()) {
    chosen = k.resolution.chosen()->variant.name();  // the build the Python client would load
    k.loadable = false;
  }
  if (!chosen) {
    Error e = std::move(chosen).error();
    if (online && e.code == ErrorCode::NoVariant) suggest_newest_version(client, k.repo, host, request.runtime, e);
    return e;
  }
  k.variant = std::move(chosen).value();

  // Step 5: metadata first, to check it before the big download.
  const std::string prefix = "build/" + k.variant + "/";
  auto meta_path = fetch_file(client, k.repo, k.commit, prefix + "metadata.json");
  if (!meta_path) {
    if (meta_path.error().code == ErrorCode::EntryNotFound)
      return Error(ErrorCode::InvalidMetadata, "variant " + k.variant + " of " + k.repo.id + " has no metadata.json",
                   "the build is incomplete; ask the publisher to re-upload it");
    return std::move(meta_path).error();
  }
  KHUB_TRY(k.metadata, forget_unless_parsed(*meta_path, protocol::read_metadata(*meta_path)));
  if (k.metadata.is_dirty())
    k.warnings.push_back("Kernel '" + k.metadata.name + "' variant '" + k.variant + "' was built from a dirty git tree.");
  if (request.check_arch) KHUB_CHECK(detail::check_device_arch(k, host));
  k.variant_dir = cache_of(client).snapshot_dir(k.repo, k.commit) / "build" / k.variant;
  return k;
}

Status install_kernel(HubClient& client, FetchedKernel& k, const KernelRequest& request) {
  if (k.commit.empty()) return {};  // a local kernel: open_local_kernel verified it
  // Step 6: only this variant's files.
  const bool online = !client.options().offline;
  const std::string prefix = "build/" + k.variant + "/";
  CacheLayout cache = cache_of(client);
  if (online) {
    const std::string key = std::to_string(client.instance_id()) + "|" + repo_folder_name(k.repo) + "|" + k.commit +
                            "|" + k.variant;
    std::vector<TreeEntry> files;
    {
      std::lock_guard<std::mutex> g(memo_mutex());
      if (auto it = listings().find(key); it != listings().end()) files = it->second;
    }
    if (files.empty()) {
      KHUB_TRY(files, list_variant_files(client, k.repo, k.commit, k.variant));
      std::lock_guard<std::mutex> g(memo_mutex());
      listings()[key] = files;
    }
    KHUB_CHECK(fetch_files(client, k.repo, k.commit, files));
  } else if (k.metadata.digest) {
    std::error_code ec;
    for (const auto& [rel, hash] : k.metadata.digest->files)
      if (!fs::exists(k.variant_dir / rel, ec))
        return Error(ErrorCode::OfflineMiss, prefix + rel + " is not in the local cache and Hugging Face Hub is in "
                                                            "offline mode", "download the kernel while online first");
  }
  KHUB_CHECK(verify_variant(k, &cache, request.reuse_hashes));
  return detail::apply_signature_policy(k, request);
}

Expected<FetchedKernel> fetch_kernel(HubClient& client, const variants::HostInfo& host, const KernelRequest& request) {
  KHUB_TRY(auto k, locate_kernel(client, host, request));
  KHUB_CHECK(install_kernel(client, k, request));
  return k;
}

Expected<FetchedKernel> open_local_kernel(const fs::path& path, const variants::HostInfo& host,
                                          HashReuse reuse_hashes, bool python_only_ok,
                                          variants::NativeRuntime runtime) {
  FetchedKernel k;
  std::error_code ec;
  if (!fs::exists(path, ec))
    return Error(ErrorCode::EntryNotFound, "Could not find kernel in " + path.string());
  // As the Python client: the path, then path/build, as folders of variant dirs; a folder where no
  // variant fits (a source tree's `torch-ext/` parses as a noarch name) passes on to the next.
  std::optional<Error> no_fit;
  for (const fs::path& candidate : {path, path / "build"}) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(candidate, ec))
      if (e.is_directory(ec) && variants::parse_variant(e.path().filename().string()))
        names.push_back(e.path().filename().string());
    if (names.empty()) continue;
    auto chosen = detail::choose_variant(names, host, candidate.string(), k.resolution, runtime);
    if (!chosen && python_only_ok && k.resolution.chosen()) {
      chosen = k.resolution.chosen()->variant.name();
      k.loadable = false;
    }
    if (!chosen) {
      no_fit = std::move(chosen).error();
      continue;
    }
    k.variant = std::move(chosen).value();
    k.variant_dir = candidate / k.variant;
    break;
  }
  if (k.variant_dir.empty()) {  // the path is a variant dir itself
    if (!fs::exists(path / "metadata.json", ec)) {
      if (no_fit) return std::move(*no_fit);
      return Error(ErrorCode::NoVariant, "Cannot find a build variant for this system in " + path.string(),
                   "point at a kernel repo, its build/ folder or one variant folder");
    }
    k.variant_dir = path;
    k.variant = fs::absolute(path).lexically_normal().filename().string();
    if (k.variant.empty()) k.variant = fs::absolute(path).parent_path().filename().string();
  }
  KHUB_TRY(k.metadata, protocol::read_metadata(k.variant_dir / "metadata.json"));
  KHUB_CHECK(verify_variant(k, nullptr, reuse_hashes));
  return k;
}

}  // namespace khub::hub
