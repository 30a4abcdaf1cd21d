#include "khub/hub/download.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>

#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/base/parallel.h"
#include "khub/base/temp_files.h"

namespace khub::hub {
namespace fs = std::filesystem;

CacheLayout cache_of(const HubClient& client) {
  fs::path root = client.options().cache_dir;
  if (root.empty()) {
    const char* home = std::getenv("HOME");
    root = fs::path(home ? home : ".") / ".cache" / "huggingface" / "hub";
  }
  return CacheLayout(root);
}

namespace {

bool present(const fs::path& p) {
  std::error_code ec;
  // Follows the symlink: a dangling pointer counts as missing, and so does a folder (a path such as
  // `build` names no file).
  return fs::is_regular_file(p, ec);
}

Error offline_miss(const RepoRef& repo, std::string_view revision, std::string_view path) {
  return Error(ErrorCode::OfflineMiss,
               std::string(path) + " of " + repo.id + " (revision: " + std::string(revision) +
                   ") is not in the local cache and Hugging Face Hub is in offline mode",
               "download it once while online (khub download " + repo.id + "), or unset HF_HUB_OFFLINE");
}

Expected<fs::path> from_cache(const CacheLayout& cache, const RepoRef& repo, std::string_view revision,
                              std::string_view path) {
  auto commit = cached_commit(cache, repo, revision);
  if (!commit) return offline_miss(repo, revision, path);
  if (present(cache.no_exist(repo, *commit, path)))
    return Error(ErrorCode::EntryNotFound, std::string(path) + " does not exist in " + repo.id + " at " + *commit +
                                               " (cached answer)");
  fs::path file = cache.snapshot_file(repo, *commit, path);
  if (present(file)) return file;
  return offline_miss(repo, revision, path);
}

// The process umask, read without changing it: umask(2) can only be read by setting it, and
// fetch_files runs several threads, so setting it (even briefly) let another thread create a blob
// or folder world-writable. /proc/self/status has it since Linux 4.7; older kernels set it once.
mode_t process_umask() {
  static const mode_t mask = [] {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
    const mode_t m = ::umask(0022);
    ::umask(m);
    return m;
  }();
  return mask;
}

Status chmod_like_umask(const fs::path& p) {
  ::chmod(p.c_str(), 0666 & ~process_umask());
  return {};
}

}  // namespace

Expected<fs::path> fetch_file(HubClient& client, const RepoRef& repo, std::string_view revision,
                              std::string_view path, const TreeEntry* expected) {
  if (!is_safe_repo_path(path))
    return Error(ErrorCode::InvalidArgument, "unsafe path '" + std::string(path) + "' in " + repo.id,
                 "paths are repo-relative and may not contain '..'");
  const CacheLayout cache = cache_of(client);
  const bool copy = client.options().disable_symlinks;
  if (revision.size() == 40 && is_hex(revision)) {
    fs::path file = cache.snapshot_file(repo, revision, path);
    if (present(file)) return file;  // commit shortcut: no request
  }
  if (client.options().offline) return from_cache(cache, repo, revision, path);

  // As huggingface_hub: one HEAD without retries when the file is cached, so an unreachable Hub
  // falls back at once; the usual retries when it is not.
  auto cached = from_cache(cache, repo, revision, path);
  auto head = client.file_metadata(repo, revision, path, !cached);
  if (!head) {
    auto code = head.error().code;
    if (cached && (code == ErrorCode::Network || code == ErrorCode::RateLimited)) return cached;
    return std::move(head).error();
  }
  const FileMetadata& meta = *head;
  if (!(meta.commit.size() == 40 && is_hex(meta.commit)))
    return Error(ErrorCode::Protocol, "HEAD " + std::string(path) + ": X-Repo-Commit '" + meta.commit +
                                          "' is not a commit id");
  // A revision that is a commit id names exactly that commit: a server answering another one would
  // put the file under a snapshot nobody asked for.
  if (meta.commit != revision && revision.size() == 40 && is_hex(revision))
    return Error(ErrorCode::Protocol, "HEAD " + std::string(path) + ": asked for commit " + std::string(revision) +
                                          ", the server answered " + meta.commit,
                 "the server is not a Hugging Face Hub (proxy or firewall?)");
  if (meta.commit != revision) KHUB_CHECK(write_ref(cache, repo, revision, meta.commit));
  if (!meta.exists) {
    // The marker only saves a later request (huggingface_hub logs and goes on when it cannot write
    // one, e.g. `build/x` after `build` was marked): the answer is EntryNotFound either way.
    (void)mark_missing(cache, repo, meta.commit, path);
    return Error(ErrorCode::EntryNotFound, std::string(path) + " not found in " + repo.id + " at " +
                                               std::string(revision), "check the file name and the revision");
  }
  // The etag names the blob and is the hash the bytes are checked against while they stream: a git
  // sha1 (regular files) or a sha256 (LFS). Anything else could not be verified, so it is refused.
  if (!is_commit_hash(meta.etag))
    return Error(ErrorCode::Protocol, "HEAD " + std::string(path) + ": etag '" + meta.etag +
                                          "' is neither a git sha1 nor a sha256, so the file cannot be verified");
  if (expected && (expected->etag() != meta.etag || expected->size != meta.size))
    return Error(ErrorCode::Integrity, std::string(path) + ": the tree listing and the file's HEAD disagree")
        .note("tree: " + expected->etag() + ", " + std::to_string(expected->size) + " bytes")
        .note("HEAD: " + meta.etag + ", " + std::to_string(meta.size) + " bytes");

  fs::path file = cache.snapshot_file(repo, meta.commit, path);
  if (present(file)) return file;
  // As huggingface_hub, before a new file is linked. Best effort there too: only backup tools read it.
  (void)tag_cache_dir(cache, repo);
  fs::path blob = cache.blob(repo, meta.etag);
  if (!present(blob)) {
    std::error_code ec;
    fs::create_directories(blob.parent_path(), ec);
    if (ec)
      return Error(ErrorCode::Io, "cannot create " + blob.parent_path().string() + ": " + ec.message(),
                   "check that the cache folder is writable (KERNELS_CACHE / HF_HUB_CACHE)");
    KHUB_TRY(auto lock, FileLock::acquire(cache.lock_file(repo, meta.etag), client.options().lock_timeout));
    if (!present(blob)) {  // another process may have finished it while we waited
      // huggingface_hub's name for a blob in progress. Under the blob's lock nobody else writes it,
      // so a file there was left by an interrupted download (khub's or Python's): it is resumed.
      // Without the lock (it timed out, or locks are unsupported here) another process may be
      // writing that very file: this one downloads into a name of its own instead, so two writers
      // never interleave bytes or rename each other's file away. Both renames land whole blobs.
      fs::path tmp = blob;
      tmp += lock.held() ? std::string(".incomplete") : temp_name_suffix() + ".incomplete";
      std::optional<TempFileGuard> private_tmp;
      if (!lock.held()) private_tmp.emplace(tmp);
      if (auto st = client.download(meta, tmp, path); !st) {
        std::error_code ignored;
        if (!lock.held()) fs::remove(tmp, ignored);
        return std::move(st).error();
      }
      KHUB_CHECK(chmod_like_umask(tmp));
      // Without symlinks a new blob moves into the snapshot, as huggingface_hub does, so the bytes
      // are stored once and its cache tools (scan, delete) see them. An existing blob is copied.
      const fs::path& dest = copy ? file : blob;
      if (copy) fs::create_directories(file.parent_path(), ec);
      if (!ec) fs::rename(tmp, dest, ec);
      if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        return Error(ErrorCode::Io, "cannot rename " + tmp.string() + " to " + dest.string() + ": " + ec.message());
      }
      if (copy) return file;
    }
  }
  KHUB_CHECK(link_snapshot_file(cache, repo, meta.commit, path, meta.etag, copy));
  return file;
}

Status fetch_files(HubClient& client, const RepoRef& repo, std::string_view commit,
                   const std::vector<TreeEntry>& files) {
  std::vector<const TreeEntry*> todo;
  for (const auto& f : files)
    if (!f.directory) todo.push_back(&f);
  (void)process_umask();  // read before any worker starts (its fallback sets the umask briefly)
  return run_parallel(todo.size(), static_cast<std::size_t>(std::max(1, client.options().max_parallel_downloads)),
                      [&](std::size_t i) -> Status {
                        auto r = fetch_file(client, repo, commit, todo[i]->path, todo[i]);
                        if (!r) return std::move(r).error();
                        return {};
                      });
}

}  // namespace khub::hub
