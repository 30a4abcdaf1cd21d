#pragma once
// khub push reads each large file once (docs/publishing.md "One read per file"). The build check
// takes such a file's sha256 from its variant's digest instead of hashing it — a claim — and the
// push confirms the claim as it next reads the file: the Xet scan hashes it while chunking it, and
// every other path (LFS, unchanged files, a dry run) hashes it before the commit. A claim that
// does not hold stops the push before its shard and its commit, with the digest check's text.
#include <filesystem>
#include <string_view>

#include "khub/protocol/digest.h"
#include "khub/publish/upload_plan.h"

namespace khub::publish::detail {

/// The files of `variant_dir` that may be claimed: at least kGitSha1MaxSize bytes (a smaller file is
/// read anyway, for the git blob sha1 the plan compares with regular remote files), named by its
/// SHA-256 `digest` with a well-formed entry (Base64 of 32 bytes), and last changed (mtime and
/// ctime) no later than its metadata.json was written. A file changed after that is hashed up front,
/// so that the usual stale build (a module rebuilt after `khub hash`) still fails before the first
/// request.
[[nodiscard]] protocol::DigestClaim claim_rule(const std::filesystem::path& variant_dir, const protocol::Digest& digest);

/// The error of a claim that did not hold: the file's bytes hash to `actual_sha256_hex`.
[[nodiscard]] Error claim_broken(const LocalFile& file, std::string_view actual_sha256_hex);

/// Hashes a claimed file (reusing a hash this process remembers for it as it is) and compares;
/// nothing for a file whose sha256 was read from its bytes.
[[nodiscard]] Status confirm_claim(const LocalFile& file);

}  // namespace khub::publish::detail
