#pragma once
// `khub sign`: writes `metadata.json.sigstore` next to every variant's metadata.json, signing its
// exact bytes with a local key (ECDSA P-256 or Ed25519, PEM). Runs after `khub hash` (the digest in
// metadata.json covers every other file); metadata.json is never modified afterwards.
#include <filesystem>
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/publish/build_tree.h"

namespace khub::publish {

struct SignResult {
  std::vector<std::string> variants;  // signed, in order
  std::string key_hint;               // verificationMaterial.publicKey.hint written
};

/// Loads the private key, checks every variant has a digest (InvalidMetadata `… has no digest; run
/// khub hash first`), then writes each bundle atomically. Unsupported for RSA or other curves;
/// InvalidArgument when the key file is not a PEM private key; Io on write failure.
[[nodiscard]] Expected<SignResult> sign_build(const BuildTree& tree, const std::filesystem::path& private_key_pem);

/// The PEM public key of a PEM private key file (to hand to verifiers).
[[nodiscard]] Expected<std::string> public_key_pem_of(const std::filesystem::path& private_key_pem);

}  // namespace khub::publish
