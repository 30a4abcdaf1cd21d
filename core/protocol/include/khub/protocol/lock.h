#pragma once
// Kernel lock files: the legacy `kernels.lock` written by `kernels lock`
// (array of {repo_id, sha, variants}) and kernels-data's `KernelLocks` (array of {dependency, lock}),
// plus the `git_lfs_concat` variant hash computed from a tree listing.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "khub/base/error.h"

namespace khub::protocol {

struct LockedVariant {
  std::string hash;                          // "sha256-<64 hex>"
  std::string hash_type = "git_lfs_concat";
  friend bool operator==(const LockedVariant&, const LockedVariant&) = default;
};

/// One entry of the legacy format. Variants keep file order (tree order of their paths).
struct LegacyLock {
  std::string repo_id;
  std::string sha;  // commit of branch v<N>
  std::vector<std::pair<std::string, LockedVariant>> variants;
  friend bool operator==(const LegacyLock&, const LegacyLock&) = default;
};

/// One entry of the current format: a dependency (exactly one of version / revision) and its commit.
struct KernelLock {
  std::string repo_id;
  std::optional<std::uint64_t> version;
  std::optional<std::string> revision;
  std::string commit;               // 40 or 64 hex
  std::optional<std::string> hash;  // Nix locks only: "sha256-<base64>"
  friend bool operator==(const KernelLock&, const KernelLock&) = default;
};

enum class LockFormat { Legacy, Current };

struct LockFile {
  LockFormat format = LockFormat::Current;
  std::vector<LegacyLock> legacy;   // format == Legacy
  std::vector<KernelLock> current;  // format == Current, sorted
  /// Commit locked for `repo_id`: the first legacy entry with that id, or the current entry (a
  /// version lock before a revision lock). Empty when the repo is not locked.
  [[nodiscard]] std::optional<std::string> commit_for(std::string_view repo_id) const;
};

/// Reads either format (told apart by the first entry's keys; `[]` reads as Current). Errors are
/// InvalidMetadata naming the entry, e.g. `kernels.lock entry 2: missing key `sha``; Io on read.
[[nodiscard]] Expected<LockFile> parse_lock_file(std::string_view json);
[[nodiscard]] Expected<LockFile> read_lock_file(const std::filesystem::path& path);

/// Legacy format exactly as Python `json.dump(indent=2)`: 2-space indent, non-ASCII as \uXXXX, no
/// trailing newline. `khub lock` writes the current format (all kernels 0.17 reads); this writes
/// what older `kernels lock` wrote, which load_kernel still reads and checks.
[[nodiscard]] std::string serialize_legacy_locks(const std::vector<LegacyLock>& locks);

/// Current format, serde pretty (2-space, no trailing newline), sorted by repo id, version before
/// revision. Returns InvalidArgument `duplicate dependency: <repo>` for duplicates.
[[nodiscard]] Expected<std::string> serialize_kernel_locks(std::vector<KernelLock> locks);

/// A file of a recursive tree listing: path, git blob `oid` and, for LFS/Xet files, `lfs.oid`.
struct TreeFile {
  std::string path;
  std::string oid;                      // 40-hex git sha1 (may be empty if unknown)
  std::optional<std::string> lfs_oid;   // 64-hex sha256
};

/// `git_lfs_concat` hash of one variant from (name relative to the variant, hex hash) pairs:
/// "sha256-" + hex(sha256(concat over pairs sorted by name of name bytes + binary hash)).
[[nodiscard]] Expected<std::string> git_lfs_concat_hash(std::vector<std::pair<std::string, std::string>> files);

/// Hashes every `build/torch*` variant of a tree listing (skipping `*.pyc` and `__pycache__`), in
/// tree order of first appearance. A file with no oid → InvalidMetadata `Cannot get blob ID for <path>`.
[[nodiscard]] Expected<std::vector<std::pair<std::string, LockedVariant>>> lock_variants(
    const std::vector<TreeFile>& tree);

}  // namespace khub::protocol
