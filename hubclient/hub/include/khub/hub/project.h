#pragma once
// Cache checks and project locks for the CLI (`khub verify`, `khub lock`); no printing here.
#include <filesystem>
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/hub/cache.h"
#include "khub/hub/hub_client.h"
#include "khub/protocol/lock.h"
#include "khub/signing/signature.h"

namespace khub::hub {

struct VariantCheck {
  std::string variant;
  bool ok = false;
  bool has_digest = false;
  bool has_signature = false;
  std::vector<std::string> problems;  // "build/<v>/<file>: …" lines
  /// Digest files not in the snapshot at all: a variant partly downloaded (a single file fetched by
  /// either client) is incomplete, not damaged, so these are not problems.
  std::vector<std::string> missing;
  std::size_t expected_files = 0;     // files the digest lists (0 without a digest)
  bool complete = false;              // `missing` is empty
  /// ok, and complete unless every cached variant was checked: a variant asked for by name must be
  /// whole, while among every cached one a partial download is reported, not failed.
  bool passed = false;
  /// "absent", "present (not verified)", or with a signature trust the outcome of verifying it
  /// (signing::to_string); a failure is also one of the problems.
  std::string signature;
};

/// Re-checks cached variants of `commit` without HTTP: every cached blob against its etag name
/// (sha256 / git sha1) and the metadata digest, and with `signature_trust` each variant's
/// metadata.json.sigstore. `variants` empty: every variant in the snapshot. Deletes nothing.
/// OfflineMiss when the snapshot or a variant is not cached.
[[nodiscard]] Expected<std::vector<VariantCheck>> verify_cached(
    const CacheLayout& cache, const RepoRef& repo, std::string_view commit, const std::vector<std::string>& variants,
    const signing::SignatureTrust* signature_trust = nullptr);

/// What `khub verify --all` finds in a whole cached revision.
struct SnapshotCheck {
  std::size_t cached_files = 0;       // files in snapshots/<commit>/
  std::vector<std::string> problems;  // "<path>: …" lines
  std::vector<std::string> missing;   // named by the cached tree listing, not in the snapshot at all
  bool has_listing = false;           // trees/<commit>.json is cached: completeness is known
  std::size_t expected_files = 0;     // files the listing names (0 without one)
  bool ok = false;                    // no problems
  bool complete = false;              // `missing` is empty
  bool passed = false;                // ok and complete
};

/// Re-checks every cached file of `commit` without HTTP: each blob against its etag name and, when
/// the commit's tree listing is cached (trees/<commit>.json, as snapshot_download leaves it), each
/// file's blob and size against the listing, files it does not name, and the ones it names that
/// are missing. Deletes nothing. OfflineMiss when the snapshot is not cached.
[[nodiscard]] Expected<SnapshotCheck> verify_cached_snapshot(const CacheLayout& cache, const RepoRef& repo,
                                                             std::string_view commit);

/// `kernels lock`: reads [tool.kernels.dependencies] (repo id = major version) from a pyproject.toml
/// and locks each dependency and, through the kernel-depends of every variant's metadata.json,
/// each kernel it depends on: its commit, in kernels-data's KernelLocks form (what kernels 0.17
/// reads). Each repo's publisher must be trusted unless `trust_remote_code`; a dependency cycle is
/// InvalidMetadata. No kernel-status.toml redirect, as kernels does (loading follows it).
[[nodiscard]] Expected<std::vector<protocol::KernelLock>> lock_project(HubClient& client,
                                                                       const std::filesystem::path& pyproject,
                                                                       bool trust_remote_code = false);

}  // namespace khub::hub
