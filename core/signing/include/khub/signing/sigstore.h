#pragma once
// Keyless Sigstore verification of `metadata.json.sigstore`: a Fulcio certificate and a Rekor log
// entry (v1 or v2), checked the way `kernels verify-signature` checks them through sigstore-python
// (its `Verifier.verify_artifact` steps 0–8, under kernels' GitHub-workflow identity policy):
// the signed times (Rekor's SET-backed integrated time, RFC 3161 timestamps that verify), the
// certificate chains to a Fulcio CA of the trusted root at each of them, its embedded
// SCT is signed by a trusted CT log, it is a code-signing certificate of an allowed workflow, the
// log entry's inclusion proof, signed checkpoint and signed entry timestamp verify against a
// trusted Rekor key, the signature covers the artifact, and the log entry records exactly that
// signature, certificate and digest. DSSE bundles are refused (metadata.json is a message).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"

namespace khub::signing {

/// A Sigstore TrustedRoot (`trusted_root.json`, media type
/// application/vnd.dev.sigstore.trustedroot+json;version=0.1): Fulcio CA chains, Rekor and CT log keys.
class SigstoreTrustRoot {
 public:
  struct Impl;
  /// InvalidArgument naming the field when `json` is not a usable trusted root.
  [[nodiscard]] static Expected<SigstoreTrustRoot> parse(std::string_view json);
  [[nodiscard]] static Expected<SigstoreTrustRoot> load(const std::filesystem::path& file);
  /// The public-good instance's root as shipped with khub (core/signing/data, refreshed with
  /// scripts/refresh-sigstore-root); a file given to `load` replaces it where it is stale.
  [[nodiscard]] static const SigstoreTrustRoot& production();

  const Impl& impl() const { return *impl_; }

 private:
  explicit SigstoreTrustRoot(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

/// Who may have signed: a GitHub Actions workflow of `repository` ("org/name"), one of
/// `signer_uris` (https://github.com/org/name/.github/workflows/FILE@REF).
struct GitHubWorkflowIdentity {
  std::string repository;
  std::vector<std::string> signer_uris;
};

/// kernels' DEFAULT_POLICIES: the kernels-community build workflows.
[[nodiscard]] const std::vector<GitHubWorkflowIdentity>& kernels_community_identities();

/// Verifies a keyless bundle over `artifact` (the exact bytes of metadata.json). Signature error with
/// one line naming the failed step; InvalidMetadata when the bundle does not parse.
[[nodiscard]] Status verify_keyless_bundle(std::string_view artifact, std::string_view bundle_json,
                                           const SigstoreTrustRoot& root,
                                           const std::vector<GitHubWorkflowIdentity>& identities);

}  // namespace khub::signing
