#include "khub/hub/project.h"

#include <algorithm>

#include <toml++/toml.h>

#include "kernel_internal.h"
#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/hub/cache_tree.h"
#include "khub/hub/download.h"
#include "khub/protocol/digest.h"
#include "khub/protocol/metadata.h"
#include "khub/variants/variant.h"

namespace khub::hub {
namespace fs = std::filesystem;

namespace {

// The hash of `file` in the form of `etag`: sha256 for 64 hex digits, else the git blob sha1; ""
// when the file cannot be read.
std::string hash_like(const fs::path& file, std::string_view etag) {
  if (etag.size() == 64) {
    auto raw = hash_file(file, HashAlgorithm::Sha256);
    return raw ? to_hex(*raw) : "";
  }
  auto sha = git_blob_sha1_file(file);
  return sha ? *sha : "";
}

std::string hash_mismatch(const std::string& where, std::string_view etag, const std::string& got) {
  return where + ": " + (etag.size() == 64 ? "sha256" : "git sha1") + " mismatch (expected " + std::string(etag) +
         ", got " + got + ")";
}

// The blob behind each cached file must hash to its own name.
void check_blobs(const fs::path& dir, const std::string& prefix, std::vector<std::string>& problems) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code entry_ec;  // the walk's own error stays in ec
    if (!it->is_symlink(entry_ec)) continue;
    std::string rel = it->path().lexically_relative(dir).generic_string();
    std::string etag = fs::read_symlink(it->path(), entry_ec).filename().string();
    if (entry_ec && !fs::exists(fs::symlink_status(it->path(), entry_ec))) continue;  // renamed away meanwhile
    if (!fs::exists(it->path(), entry_ec)) {
      problems.push_back(prefix + rel + ": blob " + etag + " is missing");
      continue;
    }
    if (etag.size() != 64 && etag.size() != 40) continue;
    if (std::string got = hash_like(it->path(), etag); got != etag)
      problems.push_back(hash_mismatch(prefix + rel, etag, got));
  }
  if (ec) problems.push_back(prefix + ": cannot read the folder: " + ec.message());  // a walk cut short
}

// Each file the listing names against it: present, its blob (a copy's content) and its size; and
// no file it does not name.
void check_against_listing(const fs::path& dir, const std::vector<TreeEntry>& listing,
                           const std::vector<std::string>& cached, SnapshotCheck& check) {
  std::vector<std::string> listed;
  for (const auto& e : listing) {
    listed.push_back(e.path);
    const fs::path file = dir / e.path;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(file, ec))) {
      check.missing.push_back(e.path);
      continue;
    }
    // A dangling pointer: check_blobs names it.
    if (!std::binary_search(cached.begin(), cached.end(), e.path)) continue;
    if (fs::is_symlink(file, ec)) {
      const std::string blob = fs::read_symlink(file, ec).filename().string();
      if (blob != e.etag())
        check.problems.push_back(e.path + ": its blob " + blob + " is not " + e.etag() + " (tree listing)");
    } else if (std::string got = hash_like(file, e.etag()); got != e.etag()) {
      check.problems.push_back(hash_mismatch(e.path, e.etag(), got));  // a copy (copy-mode cache): no blob name
    }
    const std::uintmax_t size = fs::file_size(file, ec);
    if (!ec && size != e.size)
      check.problems.push_back(e.path + ": " + std::to_string(size) + " bytes, the tree listing says " +
                               std::to_string(e.size));
  }
  for (const auto& f : cached)
    if (!std::binary_search(listed.begin(), listed.end(), f))
      check.problems.push_back(f + ": not a file of this commit (tree listing)");
}

}  // namespace

Expected<SnapshotCheck> verify_cached_snapshot(const CacheLayout& cache, const RepoRef& repo, std::string_view commit) {
  KHUB_TRY(auto cached, cached_snapshot_files(cache, repo, commit));
  SnapshotCheck check;
  check.cached_files = cached.size();
  const fs::path dir = cache.snapshot_dir(repo, commit);
  check_blobs(dir, "", check.problems);
  if (auto listing = read_tree_listing(cache, repo, commit)) {
    check.has_listing = true;
    check.expected_files = listing->size();
    check_against_listing(dir, *listing, cached, check);
  }
  check.ok = check.problems.empty();
  check.complete = check.missing.empty();
  check.passed = check.ok && check.complete;
  return check;
}

Expected<std::vector<VariantCheck>> verify_cached(const CacheLayout& cache, const RepoRef& repo,
                                                  std::string_view commit, const std::vector<std::string>& wanted,
                                                  const signing::SignatureTrust* signature_trust) {
  fs::path build = cache.snapshot_dir(repo, commit) / "build";
  std::error_code ec;
  std::vector<std::string> names = wanted;
  if (names.empty()) {
    for (const auto& e : fs::directory_iterator(build, ec))
      if (e.is_directory(ec)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
  }
  if (names.empty())
    return Error(ErrorCode::OfflineMiss, "no cached variant of " + repo.id + " at " + std::string(commit),
                 "download it first (`khub download " + repo.id + "`)");
  std::vector<VariantCheck> out;
  for (const auto& name : names) {
    VariantCheck check;
    check.variant = name;
    fs::path dir = build / name;
    const std::string prefix = "build/" + name + "/";
    if (!fs::is_directory(dir, ec))
      return Error(ErrorCode::OfflineMiss, prefix + " of " + repo.id + " is not in the cache",
                   "download it first (`khub download " + repo.id + "`)");
    check.has_signature = fs::exists(dir / "metadata.json.sigstore", ec);
    check_blobs(dir, prefix, check.problems);
    auto meta = protocol::read_metadata(dir / "metadata.json");
    if (!meta) {
      check.problems.push_back(prefix + "metadata.json: " + meta.error().message);
    } else if (meta->digest) {
      check.has_digest = true;
      check.expected_files = meta->digest->files.size();
      auto actual = protocol::compute_digest(dir, meta->digest->algorithm);
      if (!actual) check.problems.push_back(prefix + ": " + actual.error().message);
      else
        for (const auto& v : protocol::compare_digests(*meta->digest, *actual)) {
          // Not even a pointer: never downloaded. (A pointer whose blob is gone is check_blobs' problem.)
          const bool absent = v.kind == protocol::DigestViolationKind::MissingFile &&
                              !fs::exists(fs::symlink_status(dir / v.path, ec));
          if (absent) check.missing.push_back(prefix + v.path);
          else check.problems.push_back(prefix + v.path + ": " + v.describe());
        }
    }
    check.signature = check.has_signature ? "present (not verified)" : "absent";
    if (signature_trust) {
      const auto verified = signing::verify_variant_signature(dir, *signature_trust);
      check.signature = std::string(signing::to_string(verified.outcome));
      if (verified.outcome != signing::SignatureOutcome::Success)
        check.problems.push_back(prefix + "metadata.json.sigstore: " + check.signature +
                                 (verified.detail.empty() ? "" : ": " + verified.detail));
    }
    check.ok = check.problems.empty();
    check.complete = check.missing.empty();
    check.passed = check.ok && (check.complete || wanted.empty());
    out.push_back(std::move(check));
  }
  return out;
}

namespace {

// `kernels lock`'s walk (kernels/locking.py lock_kernel_tree): each dependency once, its commit,
// then the kernel-depends of every variant's metadata.json, depth first, cycles refused.
class LockWalk {
 public:
  LockWalk(HubClient& client, bool trust_remote_code) : client_(client), trust_(trust_remote_code) {}

  Status visit(const protocol::KernelDependency& dep) {
    protocol::KernelLock key{dep.repo_id, dep.version, dep.revision, "", std::nullopt};
    auto same = [&](const protocol::KernelLock& l) {
      return l.repo_id == key.repo_id && l.version == key.version && l.revision == key.revision;
    };
    if (std::any_of(locked_.begin(), locked_.end(), same)) return {};
    if (std::any_of(path_.begin(), path_.end(), same))
      return Error(ErrorCode::InvalidMetadata, "Cyclic kernel dependency detected: " + dep.repo_id);
    if (path_.size() > 32 || locked_.size() >= 256)  // the bounds of fetch_kernel_tree (kernel_tree.cpp)
      return Error(ErrorCode::InvalidMetadata, "kernel-depends tree too large: more than " +
                                                   std::string(path_.size() > 32 ? "32 levels" : "256 kernels"));
    path_.push_back(key);
    KHUB_TRY(RepoRef repo, make_repo(dep.repo_id));
    std::vector<std::string> warnings;  // only the offline skip, and locking is refused offline
    if (!trust_) KHUB_CHECK(detail::check_publisher_trust(client_, dep.repo_id, warnings));
    // A revision is locked as its commit (kernels writes the revision as given, so a branch name
    // would not pin anything; docs/cpp-api.md).
    KHUB_TRY(key.commit, resolve_commit(client_, repo, dep.version ? std::optional<int>(int(*dep.version))
                                                                    : std::nullopt, dep.revision.value_or("")));
    KHUB_TRY(auto names, list_variant_names(client_, repo, key.commit));
    for (const auto& name : names) {
      if (!variants::parse_variant(name)) continue;  // kernels skips (and warns about) unparsable names
      KHUB_TRY(auto path, fetch_file(client_, repo, key.commit, "build/" + name + "/metadata.json"));
      KHUB_TRY(auto metadata, protocol::read_metadata(path));
      for (const auto& d : metadata.kernel_depends) KHUB_CHECK(visit(d));
    }
    path_.pop_back();
    locked_.push_back(std::move(key));
    return {};
  }

  std::vector<protocol::KernelLock> take() { return std::move(locked_); }

 private:
  HubClient& client_;
  bool trust_;
  std::vector<protocol::KernelLock> locked_, path_;
};

}  // namespace

Expected<std::vector<protocol::KernelLock>> lock_project(HubClient& client, const fs::path& pyproject,
                                                         bool trust_remote_code) {
  // A lock pins what the Hub holds now, and the trust rule needs the Hub (kernels lock fails too).
  if (client.options().offline)
    return Error(ErrorCode::InvalidArgument, "cannot lock while HF_HUB_OFFLINE is set", "unset HF_HUB_OFFLINE");
  KHUB_TRY(auto text, read_file(pyproject));
  toml::table table;
  try {
    table = toml::parse(text, pyproject.string());
  } catch (const toml::parse_error& e) {
    return Error(ErrorCode::InvalidArgument, pyproject.string() + ": " + std::string(e.description()));
  }
  const auto* deps = table["tool"]["kernels"]["dependencies"].as_table();
  if (!deps)
    return Error(ErrorCode::InvalidArgument, pyproject.string() + " has no [tool.kernels.dependencies] table",
                 "add entries like \"kernels-community/relu\" = 1");
  if (deps->empty()) return Error(ErrorCode::InvalidArgument, "No kernels found to lock.");
  LockWalk walk(client, trust_remote_code);
  for (const auto& [key, value] : *deps) {
    auto version = value.value<int64_t>();
    if (!version || *version < 0)
      return Error(ErrorCode::InvalidArgument, pyproject.string() + ": dependency " + std::string(key.str()) +
                                                   " must be an integer major version");
    KHUB_CHECK(walk.visit({std::string(key.str()), static_cast<std::uint64_t>(*version), std::nullopt}));
  }
  return walk.take();
}

}  // namespace khub::hub
