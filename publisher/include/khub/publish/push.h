#pragma once
// `khub push`: publish a multi-variant build the way `kernel-builder upload` does (docs/protocol.md,
// Publish flow): pre-flight checks, create the kernel repo, branch v<N> from main if missing,
// README.md from CARD.md on main, reconcile only the pushed variants, preupload → Xet (chunks the
// Hub holds are not sent; xorbs, then the shard) where the Hub offers it, else LFS batch
// (basic/multipart) → verify → NDJSON commits of at most 1000 operations. Unchanged files are not
// sent again.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/base/repo_type.h"
#include "khub/publish/build_tree.h"
#include "khub/publish/check.h"
#include "khub/http/retry.h"
#include "khub/http/transport.h"

namespace khub::publish {

struct PushOptions {
  std::string endpoint = "https://huggingface.co";
  std::string token;                   // required unless dry_run
  std::string repo_id;                 // empty: general.hub.repo-id of build.toml
  std::optional<std::string> branch;   // beats build.toml's general.hub.branch, which beats v<version>
  std::optional<std::uint64_t> version;  // when set, must equal every variant's metadata.version
  RepoType repo_type = RepoType::Kernel;  // kernel | model (legacy repos)
  bool is_private = false;
  bool create_pr = false;
  bool dry_run = false;                // checks and plan; only GET requests
  bool run_checks = true;
  /// ELF findings (manylinux, abi3, libraries): Error fails the push, Warn reports them through
  /// `status` and goes on (local builds against a newer glibc), Off skips the ELF checks.
  enum class AbiPolicy { Error, Warn, Off } abi_policy = AbiPolicy::Error;
  CheckOptions check;
  std::size_t max_operations_per_commit = 1000;
  http::RetryPolicy retry;             // transient failures: how often, how long
  std::string tool_name = "khub";      // commit summary "Uploaded using `khub`."
  /// Progress lines (`Found 2 build variant(s) in …`, `Using branch `v1` (new)`); may be empty.
  std::function<void(std::string_view)> status;
};

struct PullRequest {
  std::string branch;
  std::string url;
};

struct PushResult {
  std::string status;  // uploaded | pull_request_created | no_changes | dry_run
  std::string repo;
  std::string branch;
  std::string commit;  // last commit on the version branch ("" when nothing was committed there)
  bool branch_created = false;
  std::vector<std::string> variants;
  std::size_t files_uploaded = 0;  // files added or replaced by the commits
  std::size_t files_deleted = 0;
  std::size_t files_unchanged = 0;
  std::uint64_t bytes_uploaded = 0;  // content bytes sent: xorb bodies, LFS bodies, inline regular files
  std::uint64_t bytes_deduplicated = 0;  // content bytes not sent because the Hub stored them already
  std::string transfer;              // xet | lfs: how file content went up ("" when none was sent)
  std::size_t commits = 0;
  std::string url;                   // tree URL of the branch
  std::vector<PullRequest> pull_requests;
};

/// Runs the checks (before any request), then publishes. Errors: InvalidArgument (options, no repo
/// id, version mismatch), InvalidMetadata / AbiViolation / Integrity (checks), Unauthorized (no
/// token), and the HTTP error classes of the Hub calls.
[[nodiscard]] Expected<PushResult> push_build(const BuildTree& tree, const PushOptions& options,
                                              http::Transport& transport);

}  // namespace khub::publish
