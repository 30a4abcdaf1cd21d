#pragma once
// `metadata.json.sigstore`: a Sigstore bundle (v0.3 media type) whose
// `messageSignature` signs the exact bytes of the variant's metadata.json. khub signs with a key
// pair (ECDSA P-256 or Ed25519; `verificationMaterial.publicKey.hint` names the key) and verifies
// such bundles against a set of trusted public keys. Keyless bundles (a Fulcio certificate and a
// Rekor entry, as kernels-community's CI signs) are verified against a Sigstore trusted root and a
// list of trusted GitHub workflows (sigstore.h), as `kernels verify-signature` does.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/signing/sigstore.h"

namespace khub::signing {

inline constexpr std::string_view kSigstoreBundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json";

struct SignatureBundle {
  std::string media_type{kSigstoreBundleMediaType};
  std::optional<std::string> key_hint;     // verificationMaterial.publicKey.hint
  bool has_certificate = false;            // keyless bundle (x509 material instead of a public key)
  std::string digest_algorithm = "SHA2_256";
  std::vector<std::uint8_t> message_digest;  // sha256 of metadata.json
  std::vector<std::uint8_t> signature;       // DER ECDSA or raw Ed25519
};

/// Parses bundle JSON (protobuf-specs camelCase). InvalidMetadata when it is not a message-signature
/// bundle of a known media type.
[[nodiscard]] Expected<SignatureBundle> parse_signature_bundle(std::string_view json);
/// Compact JSON with `mediaType`, `verificationMaterial{publicKey{hint}, tlogEntries: []}` and
/// `messageSignature{messageDigest{algorithm, digest}, signature}` (bytes as standard Base64).
[[nodiscard]] std::string serialize_signature_bundle(const SignatureBundle& bundle);

/// The hint khub writes for a public key: standard Base64 of sha256 over its DER SubjectPublicKeyInfo.
/// InvalidArgument when `public_key_pem` is not a PEM public key.
[[nodiscard]] Expected<std::string> public_key_hint(std::string_view public_key_pem);

enum class SignatureOutcome {
  Success,
  SignatureBundleMissing,
  SignatureBundleInvalid,
  MetadataMissing,
  SignatureVerificationFailure,  // digest mismatch, bad signature, or no trusted key verifies it
};
[[nodiscard]] std::string_view to_string(SignatureOutcome outcome) noexcept;

struct SignatureCheck {
  SignatureOutcome outcome = SignatureOutcome::Success;
  std::string detail;  // one line on failure
};

/// Who may have signed a variant.
struct SignatureTrust {
  std::vector<std::string> public_keys_pem;  // key-pair bundles (`khub sign --key`)
  /// Keyless bundles: the workflows that may sign (kernels' default: kernels-community's CI) …
  std::vector<GitHubWorkflowIdentity> identities = kernels_community_identities();
  /// … under this Sigstore trust root (null: the public-good instance's, SigstoreTrustRoot::production()).
  const SigstoreTrustRoot* sigstore_root = nullptr;
};

/// Verifies `variant_dir/metadata.json` against `variant_dir/metadata.json.sigstore`, in kernels' order
/// (bundle present, bundle parses, metadata present, signature over the raw bytes). A key-pair
/// bundle: a key whose hint matches is tried first, then every other trusted key. A keyless bundle:
/// verify_keyless_bundle against `trust.identities`.
[[nodiscard]] SignatureCheck verify_variant_signature(const std::filesystem::path& variant_dir,
                                                      const SignatureTrust& trust);
/// Key-pair trust only (plus the default keyless identities).
[[nodiscard]] SignatureCheck verify_variant_signature(const std::filesystem::path& variant_dir,
                                                      const std::vector<std::string>& trusted_public_keys_pem);

enum class SignaturePolicy { Ignore, Warn, Require };

/// Applies a policy for the loader: Ignore → ok without reading anything; Warn → ok, a failed check
/// appended to `warnings` as `<variant>: <outcome>: <detail>`; Require → Signature error on failure.
[[nodiscard]] Status enforce_signature_policy(const std::filesystem::path& variant_dir, SignaturePolicy policy,
                                              const SignatureTrust& trust,
                                              std::vector<std::string>* warnings = nullptr);

}  // namespace khub::signing
