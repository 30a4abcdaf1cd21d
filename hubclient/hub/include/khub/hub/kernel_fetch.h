#pragma once
// The torch-free half of get_kernel (docs/protocol.md, Kernel repositories): trust check,
// version → commit, kernel-status.toml redirect, variant choice, metadata checks, download of the
// chosen variant only, verification. The result is a verified variant directory ready to load.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/base/hash.h"
#include "khub/hub/cache.h"
#include "khub/hub/hub_client.h"
#include "khub/protocol/metadata.h"
#include "khub/signing/signature.h"
#include "khub/variants/host.h"
#include "khub/variants/resolve.h"

namespace khub::hub {

/// What a caller of get_kernel chooses: one struct for the torch API (`khub::GetKernelOptions` is
/// this type), the CLI and the torch-free path, composed into KernelRequest rather than copied.
struct KernelOptions {
  std::optional<int> version;      // branch v<N>; exactly one of version / revision
  std::string revision;            // branch, tag or commit
  std::string backend;             // "cpu" or the detected backend's name; empty = detected
  bool trust_remote_code = false;  // load from publishers the Hub does not mark as trusted
  std::string user_agent;          // caller segments, e.g. "myapp/1.0"
  std::string endpoint;            // overrides HF_ENDPOINT
  std::filesystem::path cache_dir; // overrides KERNELS_CACHE / HF_HUB_CACHE / …
  // metadata.json.sigstore: Ignore reports presence only; Warn / Require verify it. Require refuses
  // to load. A key-pair bundle must verify with one of `trusted_keys` (PEM public keys, e.g. the
  // ones `khub sign --key` used); a keyless one (Fulcio + Rekor, as kernels-community's CI signs)
  // must come from one of `trusted_identities` (default: kernels-community's build workflows, as
  // kernels) under `sigstore_trusted_root` (a trusted_root.json; empty: the public-good root).
  signing::SignaturePolicy signature_policy = signing::SignaturePolicy::Ignore;
  std::vector<std::string> trusted_keys;
  std::vector<signing::GitHubWorkflowIdentity> trusted_identities = signing::kernels_community_identities();
  std::filesystem::path sigstore_trusted_root;
};

struct KernelRequest {
  std::string repo_id;
  KernelOptions options;               // the caller's choices (user_agent/endpoint/cache_dir: for the client)
  std::optional<RepoType> repo_type;   // nullopt: kernel, falling back to model on RepoNotFound
  bool check_arch = true;              // compare backend.archs with the GPU
  // Follow the revision's kernel-status.toml redirect. Locked loads turn it off: the lock
  // pins a commit of this repo, and a redirect (to another repo's moving branch) would undo that.
  bool follow_redirect = true;
  // Unchanged: files this process already hashed and that have not changed since are not read
  // again (see HashReuse); get_kernel sets it, so a warm call costs stat calls, not a re-hash.
  HashReuse reuse_hashes = HashReuse::Never;
  // A kernel dependency: when no natively loadable variant fits, take the build the Python client
  // would load (noarch, …) and mark it FetchedKernel::loadable = false instead of failing.
  bool python_only_ok = false;
  // The native kinds the caller loads: torch arch + stable ABI (khub::kernel) or tvm-ffi (khub::ffi).
  variants::NativeRuntime runtime = variants::NativeRuntime::Torch;
};


enum class SignatureStatus { Absent, PresentNotVerified, Verified, Failed };

struct FetchedKernel {
  RepoRef repo;                        // after redirect and model fallback
  std::string revision;                // the revision asked for (v1, main, a commit)
  std::string commit;                  // empty for local paths
  std::string variant;                 // chosen variant name
  std::filesystem::path variant_dir;   // snapshots/<commit>/build/<variant> or the local dir
  protocol::KernelMetadata metadata;
  bool verified = false;               // digest (or every blob against its etag) checked
  bool loadable = true;                // false: a Python-only build (KernelRequest::python_only_ok)
  SignatureStatus signature = SignatureStatus::Absent;
  variants::Resolution resolution;     // every candidate with its reason
  std::vector<std::string> warnings;   // redirect, newer version, offline trust skip, dirty build
};

/// Runs the get_kernel steps for `request` on `host`. Errors: InvalidArgument (version/revision),
/// Untrusted, RepoNotFound, RevisionNotFound (missing version lists the available ones), OfflineMiss,
/// NoVariant (notes = trace), InvalidMetadata, Unsupported (device arch), Integrity (the bad blob is
/// deleted and named), Network, Io.
[[nodiscard]] Expected<FetchedKernel> fetch_kernel(HubClient& client, const variants::HostInfo& host,
                                                   const KernelRequest& request);

/// fetch_kernel in two halves (a dependency tree is located whole before anything is downloaded,
/// as kernels does): locate_kernel stops after the metadata and arch checks (only metadata.json is
/// fetched; `variant_dir` is where the variant will be); install_kernel downloads the variant's files
/// and verifies them (digest, signature policy). For a local kernel (no commit) install only verifies.
[[nodiscard]] Expected<FetchedKernel> locate_kernel(HubClient& client, const variants::HostInfo& host,
                                                    const KernelRequest& request);
[[nodiscard]] Status install_kernel(HubClient& client, FetchedKernel& kernel, const KernelRequest& request);

/// A kernel on disk: a repo root, its build/, or one variant dir. `python_only_ok` as in KernelRequest.
[[nodiscard]] Expected<FetchedKernel> open_local_kernel(const std::filesystem::path& path,
                                                        const variants::HostInfo& host,
                                                        HashReuse reuse_hashes = HashReuse::Never,
                                                        bool python_only_ok = false,
                                                        variants::NativeRuntime runtime = variants::NativeRuntime::Torch);

struct VersionInfo {
  int version = 0;
  std::string commit;
};

/// Versions (branches v<N>) ascending: from the Hub online, from cached refs/v<N> offline.
[[nodiscard]] Expected<std::vector<VersionInfo>> list_versions(HubClient& client, const RepoRef& repo);

/// Variant directory names under build/ at `commit` (tree listing online, snapshot offline).
[[nodiscard]] Expected<std::vector<std::string>> list_variant_names(HubClient& client, const RepoRef& repo,
                                                                    std::string_view commit);

/// Recursive listing of build/<variant>/ at `commit`: files only, without *.pyc and __pycache__;
/// Protocol when an entry lies outside the variant.
[[nodiscard]] Expected<std::vector<TreeEntry>> list_variant_files(HubClient& client, const RepoRef& repo,
                                                                  std::string_view commit, std::string_view variant);

/// Checks a variant dir: metadata required keys, digest (deleting blobs of mismatching cached files
/// when `cache` is given) or, without a digest, every cached blob against its etag name.
[[nodiscard]] Status verify_variant(FetchedKernel& kernel, const CacheLayout* cache,
                                    HashReuse reuse_hashes = HashReuse::Never);

/// Whether a loadable variant for `host` exists at the request's version/revision: no trust check,
/// no download. NoVariant is answered false; other failures are errors.
[[nodiscard]] Expected<bool> has_variant(HubClient& client, const variants::HostInfo& host,
                                         const KernelRequest& request);

/// Version (branch v<N>) or revision → commit, online or from cached refs; writes the ref. Offline a
/// version may be found in the model folder, which switches `repo`.
[[nodiscard]] Expected<std::string> resolve_commit(HubClient& client, RepoRef& repo, std::optional<int> version,
                                                   std::string_view revision);

/// git_lfs_concat hash of a cached variant dir from its blob names (the legacy kernels.lock re-check).
[[nodiscard]] Expected<std::string> variant_lock_hash(const std::filesystem::path& variant_dir);

/// A client shared by every caller with the same endpoint, token, cache, offline mode and user agent
/// (one connection pool and one memo per configuration in the process).
[[nodiscard]] std::shared_ptr<HubClient> shared_client(const ClientOptions& options);
/// Forgets every shared client: their pooled connections close once no caller holds them, and the
/// next get_kernel starts with fresh memos. For servers that wait on idle keep-alive connections.
void drop_shared_clients();

/// Whether `archs` (metadata backend.archs) admit CUDA capability `capability`, as kernels' check_arch.
[[nodiscard]] bool cuda_archs_admit(const std::vector<std::string>& archs, variants::Version capability);

}  // namespace khub::hub
