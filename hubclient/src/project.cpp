#include "khub/hub/project.h"

#include <toml++/toml.h>

#include "kernel_internal.h"
#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/hub/download.h"
#include "khub/protocol/digest.h"
#include "khub/protocol/metadata.h"

namespace khub::hub {
namespace fs = std::filesystem;

namespace {

// The blob behind each cached file must hash to its own name.
void check_blobs(const fs::path& dir, const std::string& prefix, VariantCheck& check) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_symlink(ec)) continue;
    std::string rel = it->path().lexically_relative(dir).generic_string();
    std::string etag = fs::read_symlink(it->path(), ec).filename().string();
    if (!fs::exists(it->path(), ec)) {
      check.problems.push_back(prefix + rel + ": blob " + etag + " is missing");
      continue;
    }
    std::string got;
    if (etag.size() == 64) {
      auto raw = hash_file(it->path(), HashAlgorithm::Sha256);
      if (raw) got = to_hex(*raw);
    } else if (etag.size() == 40) {
      auto sha = git_blob_sha1_file(it->path());
      if (sha) got = *sha;
    } else {
      continue;
    }
    if (got != etag)
      check.problems.push_back(prefix + rel + ": " + (etag.size() == 64 ? "sha256" : "git sha1") +
                               " mismatch (expected " + etag + ", got " + got + ")");
  }
}

}  // namespace

Expected<std::vector<VariantCheck>> verify_cached(const CacheLayout& cache, const RepoRef& repo,
                                                  std::string_view commit, const std::vector<std::string>& wanted) {
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
    check_blobs(dir, prefix, check);
    auto meta = protocol::read_metadata(dir / "metadata.json");
    if (!meta) {
      check.problems.push_back(prefix + "metadata.json: " + meta.error().message);
    } else if (meta->digest) {
      check.has_digest = true;
      auto actual = protocol::compute_digest(dir, meta->digest->algorithm);
      if (!actual) check.problems.push_back(prefix + ": " + actual.error().message);
      else
        for (const auto& v : protocol::compare_digests(*meta->digest, *actual))
          check.problems.push_back(prefix + v.path + ": " + v.describe());
    }
    check.ok = check.problems.empty();
    out.push_back(std::move(check));
  }
  return out;
}

Expected<std::vector<protocol::LegacyLock>> lock_project(HubClient& client, const fs::path& pyproject) {
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
  std::vector<protocol::LegacyLock> locks;
  for (const auto& [key, value] : *deps) {
    auto version = value.value<int64_t>();
    if (!version || *version < 0)
      return Error(ErrorCode::InvalidArgument, pyproject.string() + ": dependency " + std::string(key.str()) +
                                                   " must be an integer major version");
    KHUB_TRY(RepoRef repo, make_repo(key.str()));
    // kernel-status.toml at main redirects the whole dependency.
    auto status = fetch_file(client, repo, "main", "kernel-status.toml");
    if (status) {
      KHUB_TRY(auto toml_text, read_file(*status));
      KHUB_TRY(auto redirect, detail::parse_kernel_status(toml_text));
      if (redirect) {
        KHUB_TRY(repo, make_repo(redirect->destination));
      }
    } else if (status.error().code != ErrorCode::EntryNotFound && status.error().code != ErrorCode::RepoNotFound &&
               status.error().code != ErrorCode::RevisionNotFound) {
      return std::move(status).error();
    }
    std::vector<std::string> warnings;
    KHUB_TRY(auto commit, detail::resolve_version(client, repo, static_cast<int>(*version), warnings));
    KHUB_TRY(auto tree, client.list_tree(repo, commit, "build", true));
    std::vector<protocol::TreeFile> files;
    for (const auto& e : tree)
      if (!e.directory)
        files.push_back({e.path, e.oid, e.lfs_oid.empty() ? std::nullopt : std::optional<std::string>(e.lfs_oid)});
    KHUB_TRY(auto variants, protocol::lock_variants(files));
    locks.push_back(protocol::LegacyLock{repo.id, commit, std::move(variants)});
  }
  return locks;
}

}  // namespace khub::hub
