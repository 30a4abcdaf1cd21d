// has_variant, lock hashes of cached variants, and the per-configuration shared client.
#include <map>
#include <mutex>

#include "kernel_internal.h"
#include "khub/hub/download.h"
#include "khub/protocol/lock.h"

namespace khub::hub {
namespace fs = std::filesystem;

Expected<bool> has_variant(HubClient& client, const variants::HostInfo& detected, const KernelRequest& request) {
  KHUB_TRY(auto repo, make_repo(request.repo_id, request.repo_type.value_or(RepoType::Kernel)));
  variants::HostInfo host = detected;
  if (!request.options.backend.empty()) {
    KHUB_TRY(host, variants::with_backend(detected, request.options.backend));
  }
  std::vector<std::string> warnings;
  std::string commit;
  if (request.options.version) {
    auto c = detail::resolve_version(client, repo, *request.options.version, warnings);
    if (!c && c.error().code == ErrorCode::RevisionNotFound) return false;
    if (!c) return std::move(c).error();
    commit = *c;
  } else {
    KHUB_TRY(commit, detail::resolve_revision(client, repo, request.options.revision));
  }
  KHUB_TRY(auto names, list_variant_names(client, repo, commit));
  variants::Resolution resolution;
  return detail::choose_variant(names, host, repo.id, resolution, request.runtime).has_value();
}

Expected<std::string> resolve_commit(HubClient& client, RepoRef& repo, std::optional<int> version,
                                     std::string_view revision) {
  if (version) {
    std::vector<std::string> warnings;
    return detail::resolve_version(client, repo, *version, warnings);
  }
  return detail::resolve_revision(client, repo, revision.empty() ? "main" : revision);
}

Expected<std::string> variant_lock_hash(const fs::path& variant_dir) {
  std::vector<std::pair<std::string, std::string>> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(variant_dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::string rel = it->path().lexically_relative(variant_dir).generic_string();
    if (rel.ends_with(".pyc") || rel.find("__pycache__") != std::string::npos) continue;
    if (!it->is_symlink(ec)) continue;  // cached files are pointers named after their blob
    std::string blob = fs::read_symlink(it->path(), ec).filename().string();
    if (blob.size() != 40 && blob.size() != 64)
      return Error(ErrorCode::Integrity, "Unexpected blob filename length: " + std::to_string(blob.size()) + " (" +
                                             rel + ")");
    files.emplace_back(rel, blob);
  }
  if (ec) return Error(ErrorCode::Io, "cannot list " + variant_dir.string() + ": " + ec.message());
  return protocol::git_lfs_concat_hash(std::move(files));
}

namespace {
std::mutex& clients_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::shared_ptr<HubClient>>& clients() {
  static std::map<std::string, std::shared_ptr<HubClient>> c;
  return c;
}
}  // namespace

void drop_shared_clients() {
  std::lock_guard<std::mutex> g(clients_mutex());
  clients().clear();
}

std::shared_ptr<HubClient> shared_client(const ClientOptions& options) {  std::string key = options.endpoint + "\n" + options.token + "\n" + options.cache_dir.string() + "\n" +
                    (options.offline ? "offline" : "online") + "\n" + render_user_agent(options);
  std::lock_guard<std::mutex> g(clients_mutex());
  auto& c = clients()[key];
  if (!c) c = std::make_shared<HubClient>(options);
  return c;
}

}  // namespace khub::hub
