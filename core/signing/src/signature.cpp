#include "khub/signing/signature.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/json/fields.h"
#include "sigstore_internal.h"

namespace khub::signing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

std::optional<std::string> read_all(const fs::path& p) {
  auto text = read_file(p);
  if (!text) return std::nullopt;
  return std::move(text).value();
}

PkeyPtr load_public_key(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  return PkeyPtr(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr, EVP_PKEY_free);
}

Expected<std::vector<std::uint8_t>> b64_field(const Json& obj, const char* key, const char* where) {
  if (!obj.contains(key) || !obj[key].is_string()) {
    return Error(ErrorCode::InvalidMetadata, std::string("signature bundle: missing ") + where + "." + key);
  }
  auto bytes = base64_decode(obj[key].get<std::string>());
  if (!bytes) return Error(ErrorCode::InvalidMetadata, std::string("signature bundle: ") + where + "." + key + " is not Base64");
  return std::move(bytes).value();
}

std::string string_or_empty(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Expected<SignatureBundle> parse_signature_bundle(std::string_view json) {
  Json j = json_fields::parse_untrusted(json);
  if (!j.is_object()) return Error(ErrorCode::InvalidMetadata, "signature bundle is not a JSON object");
  SignatureBundle b;
  b.media_type = string_or_empty(j, "mediaType");
  if (!b.media_type.starts_with("application/vnd.dev.sigstore.bundle")) {
    return Error(ErrorCode::InvalidMetadata, "signature bundle: unknown mediaType `" + b.media_type + "`");
  }
  if (!j.contains("verificationMaterial") || !j["verificationMaterial"].is_object()) {
    return Error(ErrorCode::InvalidMetadata, "signature bundle: missing verificationMaterial");
  }
  const auto& vm = j["verificationMaterial"];
  if (vm.contains("publicKey") && vm["publicKey"].is_object() && vm["publicKey"].contains("hint") &&
      vm["publicKey"]["hint"].is_string()) {
    b.key_hint = vm["publicKey"]["hint"].get<std::string>();
  }
  b.has_certificate = vm.contains("certificate") || vm.contains("x509CertificateChain");
  if (!j.contains("messageSignature") || !j["messageSignature"].is_object()) {
    return Error(ErrorCode::InvalidMetadata, "signature bundle: no messageSignature (DSSE bundles are not used for metadata)");
  }
  const auto& ms = j["messageSignature"];
  KHUB_TRY(b.signature, b64_field(ms, "signature", "messageSignature"));
  if (ms.contains("messageDigest") && ms["messageDigest"].is_object()) {
    b.digest_algorithm = string_or_empty(ms["messageDigest"], "algorithm");
    KHUB_TRY(b.message_digest, b64_field(ms["messageDigest"], "digest", "messageDigest"));
  }
  return b;
}

std::string serialize_signature_bundle(const SignatureBundle& b) {
  Json vm = Json::object();
  Json pk = Json::object();
  if (b.key_hint) pk["hint"] = *b.key_hint;
  vm["publicKey"] = pk;
  vm["tlogEntries"] = Json::array();
  Json ms = Json::object();
  ms["messageDigest"] = {{"algorithm", b.digest_algorithm}, {"digest", base64_encode(b.message_digest)}};
  ms["signature"] = base64_encode(b.signature);
  Json j = Json::object();
  j["mediaType"] = b.media_type;
  j["verificationMaterial"] = std::move(vm);
  j["messageSignature"] = std::move(ms);
  return j.dump();
}

Expected<std::string> public_key_hint(std::string_view pem) {
  auto key = load_public_key(pem);
  if (!key) return Error(ErrorCode::InvalidArgument, "not a PEM public key");
  const auto id = sigstore_detail::key_id_of(key.get());  // sha256 of the DER SubjectPublicKeyInfo
  if (id.empty()) return Error(ErrorCode::InvalidArgument, "cannot encode the public key");
  return base64_encode(id);
}

std::string_view to_string(SignatureOutcome o) noexcept {
  switch (o) {
    case SignatureOutcome::Success: return "Success";
    case SignatureOutcome::SignatureBundleMissing: return "SignatureBundleMissing";
    case SignatureOutcome::SignatureBundleInvalid: return "SignatureBundleInvalid";
    case SignatureOutcome::MetadataMissing: return "MetadataMissing";
    case SignatureOutcome::SignatureVerificationFailure: return "SignatureVerificationFailure";
  }
  return "SignatureVerificationFailure";
}

SignatureCheck verify_variant_signature(const fs::path& dir, const std::vector<std::string>& trusted) {
  SignatureTrust trust;
  trust.public_keys_pem = trusted;
  return verify_variant_signature(dir, trust);
}

SignatureCheck verify_variant_signature(const fs::path& dir, const SignatureTrust& trust) {
  const std::vector<std::string>& trusted = trust.public_keys_pem;
  auto bundle_text = read_all(dir / "metadata.json.sigstore");
  if (!bundle_text) return {SignatureOutcome::SignatureBundleMissing, "no metadata.json.sigstore"};
  auto bundle = parse_signature_bundle(*bundle_text);
  if (!bundle) return {SignatureOutcome::SignatureBundleInvalid, bundle.error().message};
  auto metadata = read_all(dir / "metadata.json");
  if (!metadata) return {SignatureOutcome::MetadataMissing, "no metadata.json"};
  if (bundle->has_certificate) {
    if (trust.identities.empty()) {
      return {SignatureOutcome::SignatureVerificationFailure, "keyless bundle, and no trusted signing identity configured"};
    }
    const auto& root = trust.sigstore_root ? *trust.sigstore_root : SigstoreTrustRoot::production();
    auto st = verify_keyless_bundle(*metadata, *bundle_text, root, trust.identities);
    if (st) return {SignatureOutcome::Success, ""};
    const bool unreadable = st.error().code == ErrorCode::InvalidMetadata;
    return {unreadable ? SignatureOutcome::SignatureBundleInvalid : SignatureOutcome::SignatureVerificationFailure,
            st.error().message};
  }
  if (!bundle->message_digest.empty()) {
    Hasher h(HashAlgorithm::Sha256);
    h.update(*metadata);
    if (bundle->digest_algorithm != "SHA2_256" || h.finish() != bundle->message_digest) {
      return {SignatureOutcome::SignatureVerificationFailure, "messageDigest does not match metadata.json"};
    }
  }
  // Hint-matching keys first, then the rest.
  std::vector<const std::string*> order;
  for (const auto& pem : trusted) {
    auto hint = public_key_hint(pem);
    if (hint && bundle->key_hint && *hint == *bundle->key_hint) order.insert(order.begin(), &pem);
    else order.push_back(&pem);
  }
  for (const auto* pem : order) {
    auto key = load_public_key(*pem);
    if (key && sigstore_detail::verify_signature(
                   key.get(), {reinterpret_cast<const std::uint8_t*>(metadata->data()), metadata->size()},
                   bundle->signature)) {
      return {SignatureOutcome::Success, ""};
    }
  }
  return {SignatureOutcome::SignatureVerificationFailure,
          trusted.empty() ? "no trusted public key configured" : "no trusted public key verifies the signature"};
}

Status enforce_signature_policy(const fs::path& dir, SignaturePolicy policy, const SignatureTrust& trusted,
                                std::vector<std::string>* warnings) {
  if (policy == SignaturePolicy::Ignore) return {};
  auto check = verify_variant_signature(dir, trusted);
  if (check.outcome == SignatureOutcome::Success) return {};
  std::string line = dir.filename().string() + ": " + std::string(to_string(check.outcome)) + ": " + check.detail;
  if (policy == SignaturePolicy::Warn) {
    if (warnings) warnings->push_back(std::move(line));
    return {};
  }
  return Error(ErrorCode::Signature, line, "sign the build with `khub sign --key KEY.pem` or trust its public key");
}

}  // namespace khub::signing
