#include "khub/hub/cache.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/base/temp_files.h"

namespace khub::hub {
namespace fs = std::filesystem;

fs::path CacheLayout::repo_dir(const RepoRef& repo) const { return root_ / repo_folder_name(repo); }
fs::path CacheLayout::blob(const RepoRef& repo, std::string_view etag) const {
  return repo_dir(repo) / "blobs" / std::string(etag);
}
fs::path CacheLayout::snapshot_dir(const RepoRef& repo, std::string_view commit) const {
  return repo_dir(repo) / "snapshots" / std::string(commit);
}
fs::path CacheLayout::snapshot_file(const RepoRef& repo, std::string_view commit, std::string_view path) const {
  return snapshot_dir(repo, commit) / std::string(path);
}
fs::path CacheLayout::ref_file(const RepoRef& repo, std::string_view revision) const {
  return repo_dir(repo) / "refs" / std::string(revision);
}
fs::path CacheLayout::no_exist(const RepoRef& repo, std::string_view commit, std::string_view path) const {
  return repo_dir(repo) / ".no_exist" / std::string(commit) / std::string(path);
}
fs::path CacheLayout::tree_listing(const RepoRef& repo, std::string_view commit) const {
  return repo_dir(repo) / "trees" / (std::string(commit) + ".json");
}
fs::path CacheLayout::staging_dir(const RepoRef& repo) const { return repo_dir(repo) / ".staging"; }
fs::path CacheLayout::lock_file(const RepoRef& repo, std::string_view etag) const {
  return root_ / ".locks" / repo_folder_name(repo) / (std::string(etag) + ".lock");
}

std::optional<std::string> read_ref(const CacheLayout& cache, const RepoRef& repo, std::string_view revision) {
  std::ifstream in(cache.ref_file(repo, revision));
  if (!in) return std::nullopt;
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  if (!is_commit_hash(s)) return std::nullopt;  // it becomes a folder name: nothing but a commit hash
  return s;
}

namespace {
// A cache write that failed: most often a cache folder this user may not write.
Error cache_write_error(std::string message) {
  return Error(ErrorCode::Io, std::move(message), "check that the cache folder is writable (KERNELS_CACHE / HF_HUB_CACHE)");
}
}  // namespace

Status write_ref(const CacheLayout& cache, const RepoRef& repo, std::string_view revision, std::string_view commit) {
  if (!is_commit_hash(commit))
    return Error(ErrorCode::Protocol, "refusing to record '" + std::string(commit) + "' as the commit of " +
                                          std::string(revision) + ": not a commit hash");
  if (!is_safe_repo_path(revision))  // refs/<revision> is a file under the repo's folder
    return Error(ErrorCode::InvalidArgument, "revision '" + std::string(revision) + "' cannot name a file in the cache",
                 "use a branch, tag or commit name without '..', '.' or empty parts");
  if (revision == commit) return {};
  if (auto current = read_ref(cache, repo, revision); current && *current == commit) return {};
  if (auto st = write_file_atomic(cache.ref_file(repo, revision), commit, 0644, cache.staging_dir(repo)); !st) return cache_write_error(st.error().message);
  return {};
}

std::optional<std::string> cached_commit(const CacheLayout& cache, const RepoRef& repo, std::string_view revision) {
  if (revision.size() == 40 && is_hex(revision)) return std::string(revision);
  return read_ref(cache, repo, revision);
}

namespace {
// Makes the pointer (or copy) at `tmp`, then renames it to `file`. The symlink's target is relative
// to `file`'s folder, wherever `tmp` is (a symlink's text does not change when it moves).
std::error_code make_and_rename(const fs::path& tmp, const fs::path& file, const fs::path& blob, bool copy,
                                std::string& what) {
  const TempFileGuard removed_on_ctrl_c(tmp);
  std::error_code ec;
  if (!copy) {
    fs::path target = blob.lexically_relative(file.parent_path());  // like os.path.relpath
    fs::create_symlink(target, tmp, ec);
  }
  if (copy || ec) {
    ec.clear();
    fs::copy_file(blob, tmp, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      what = "cannot copy " + blob.string() + " to " + tmp.string();
      return ec;
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    what = "cannot create " + file.string();
  }
  return ec;
}
}  // namespace

Status link_snapshot_file(const CacheLayout& cache, const RepoRef& repo, std::string_view commit,
                          std::string_view path, std::string_view etag, bool copy) {
  fs::path file = cache.snapshot_file(repo, commit, path);
  fs::path blob = cache.blob(repo, etag);
  const fs::path staging = cache.staging_dir(repo);
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return cache_write_error("cannot create " + file.parent_path().string() + ": " + ec.message());
  fs::create_directories(staging, ec);
  if (ec) return cache_write_error("cannot create " + staging.string() + ": " + ec.message());
  // Built outside the snapshot, then renamed over the final name: readers never see a half-made
  // pointer, and a digest check walking the snapshot (another process's get_kernel) never meets a
  // temp name. Several processes may link the same file at once; each rename is whole.
  std::string what;
  ec = make_and_rename(staging / (file.filename().string() + temp_name_suffix()), file, blob, copy, what);
  if (ec == std::errc::cross_device_link) {  // the snapshot folder is on another filesystem: stage beside it
    fs::path beside = file;
    beside += temp_name_suffix();
    ec = make_and_rename(beside, file, blob, copy, what);
  }
  if (ec) return cache_write_error(what + ": " + ec.message());
  return {};
}

namespace {
// The Cache Directory Tagging Standard's signature line, then huggingface_hub's comment lines: the
// same bytes, so a cache filled by either client is the same.
constexpr std::string_view kCachedirTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by huggingface_hub.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n";
}  // namespace

Status tag_cache_dir(const CacheLayout& cache, const RepoRef& repo) {
  std::error_code ec;
  if (fs::exists(cache.cachedir_tag(), ec)) return {};
  // Staged in the repo's .staging/: a temp name at the root would look like a broken repo folder to
  // huggingface_hub's scan_cache_dir. Two writers at once rename the same bytes.
  return write_file_atomic(cache.cachedir_tag(), kCachedirTag, 0644, cache.staging_dir(repo));
}

Status mark_missing(const CacheLayout& cache, const RepoRef& repo, std::string_view commit, std::string_view path) {
  fs::path marker = cache.no_exist(repo, commit, path);
  std::error_code ec;
  if (fs::exists(marker, ec)) return {};
  return write_file_atomic(marker, "", 0644, cache.staging_dir(repo));
}

std::optional<int> parse_version_branch(std::string_view name) {
  if (name.size() < 2 || name[0] != 'v' || name.size() > 10) return std::nullopt;
  int n = 0;
  for (char c : name.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

Expected<std::vector<std::string>> cached_snapshot_files(const CacheLayout& cache, const RepoRef& repo,
                                                         std::string_view commit) {
  const fs::path dir = cache.snapshot_dir(repo, commit);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Error(ErrorCode::OfflineMiss,
                 "Cannot find a local snapshot for " + repo.id + " (revision: " + std::string(commit) +
                     "). When Hugging Face Hub is in offline mode the files must already be present in the local "
                     "cache.",
                 "download it while online first (`khub download " + repo.id + " --all`)");
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (fs::is_regular_file(it->path(), ec))  // follows the pointer: a missing blob is not there
      files.push_back(it->path().lexically_relative(dir).generic_string());
  if (ec) return Error(ErrorCode::Io, "cannot read " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<int> cached_versions(const CacheLayout& cache, const RepoRef& repo) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache.repo_dir(repo) / "refs", ec))
    if (auto n = parse_version_branch(e.path().filename().string()); n && e.is_regular_file(ec)) out.push_back(*n);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace khub::hub
