#pragma once
// What `khub push` changes on each branch, decided without the network from the local build and
// the branch's current file list (docs/protocol.md, Publish flow): README.md from CARD.md on `main`;
// on the version branch, benchmarks and build files added, stale files of the pushed variants
// deleted (every stale build/ file on a new branch), files whose content is already there skipped.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/publish/build_tree.h"

namespace khub::publish {

struct LocalFile {
  std::string repo_path;          // e.g. build/<variant>/__init__.py, benchmarks/benchmark.py, README.md
  std::filesystem::path source;   // bytes to upload (symlinks resolved)
  std::uint64_t size = 0;
  std::string sha256;             // hex: LFS oid
  std::string git_sha1;           // hex: git blob id (regular files); empty above kGitSha1MaxSize
  /// sha256 taken from the variant's digest, not yet from the bytes: khub push confirms it when it
  /// reads the file for its upload, before the commit (src/digest_claims.h).
  bool sha256_claimed = false;
};

/// Files larger than this (10 MiB) skip the git blob sha1: the Hub keeps them in LFS (or Xet), where
/// the sha256 says whether the branch holds them already. A remote regular file that large is
/// then never taken for the same content, and the push uploads it again.
inline constexpr std::uint64_t kGitSha1MaxSize = std::uint64_t{10} << 20;

struct RemoteFile {
  std::string path;
  std::string oid;                    // git blob sha1
  std::optional<std::string> lfs_oid; // sha256 for LFS files
  std::optional<std::string> xet_hash; // Xet file hash when the Hub stores the file with Xet
  std::uint64_t size = 0;
};

struct BranchPlan {
  std::string branch;
  std::vector<LocalFile> adds;       // sorted by repo_path; unchanged files left out
  std::vector<std::string> deletes;  // sorted
  std::size_t unchanged = 0;         // adds skipped because the branch already has the bytes
  /// Repo path → the Xet-stored version an add replaces: its chunks are what a Xet upload of the
  /// new version can most likely reuse.
  std::map<std::string, RemoteFile> replaced_xet;
  [[nodiscard]] std::size_t operation_count() const { return adds.size() + deletes.size(); }
};

struct PlanInput {
  std::string branch;                        // version branch, e.g. v1
  bool new_branch = false;                   // created by this push (inherits main's files)
  std::vector<std::string> variants;         // pushed variant names
  std::vector<LocalFile> build_files;        // build/<variant>/…
  std::vector<LocalFile> benchmark_files;    // benchmarks/benchmark*.py
  std::optional<LocalFile> readme;           // README.md for main (from CARD.md)
  std::vector<RemoteFile> remote_branch;     // files on `branch` now
  std::vector<RemoteFile> remote_main;       // files on main now (README comparison)
};

/// One plan per branch that has operations or a README, in byte order of branch name (`main` before
/// `v1`). When `branch` is `main` everything lands in one plan.
[[nodiscard]] std::vector<BranchPlan> plan_upload(const PlanInput& input);

/// True when the remote file has exactly these bytes (sha256 vs lfs oid, else git sha1 vs oid).
[[nodiscard]] bool has_same_content(const LocalFile& local, const RemoteFile& remote);

/// Hashes one local file as `repo_path`. Io on read failure.
[[nodiscard]] Expected<LocalFile> hash_local_file(const std::filesystem::path& source, std::string repo_path);

/// Every regular file of each variant (symlinked files by their target's bytes; `__pycache__` and
/// `*.pyc` left out) as build/<variant>/<rel>, sorted; benchmarks/benchmark*.py of the kernel dir;
/// CARD.md of the variants dir as README.md. With `digest_claims`, the large files the build check
/// took from the digest unread (CheckOptions::digest_claims) are claimed, not read, here too.
struct LocalFiles {
  std::vector<LocalFile> build;
  std::vector<LocalFile> benchmarks;
  std::optional<LocalFile> readme;
};
[[nodiscard]] Expected<LocalFiles> collect_local_files(const BuildTree& tree, bool digest_claims = false);

}  // namespace khub::publish
