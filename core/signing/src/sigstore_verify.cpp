// Keyless bundle verification, in sigstore-python's order (Verifier.verify_artifact, steps 0–8).
#include <openssl/asn1.h>
#include <openssl/ct.h>
#include <openssl/objects.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <ctime>
#include <optional>

#include "sigstore_internal.h"

namespace khub::signing {
namespace {

using namespace sigstore_detail;

constexpr std::string_view kGitHubIssuer = "https://token.actions.githubusercontent.com";

std::optional<Bytes> extension_bytes(X509* cert, const char* oid) {
  std::unique_ptr<ASN1_OBJECT, decltype(&ASN1_OBJECT_free)> obj(OBJ_txt2obj(oid, 1), ASN1_OBJECT_free);
  const int idx = obj ? X509_get_ext_by_OBJ(cert, obj.get(), -1) : -1;
  if (idx < 0) return std::nullopt;
  const ASN1_OCTET_STRING* data = X509_EXTENSION_get_data(X509_get_ext(cert, idx));
  return Bytes(data->data, data->data + data->length);
}

// Fulcio's V1 extensions hold the raw string; V2 ones a DER UTF8String.
std::optional<std::string> extension_text(X509* cert, const char* oid, bool der_utf8) {
  auto raw = extension_bytes(cert, oid);
  if (!raw) return std::nullopt;
  if (!der_utf8) return std::string(raw->begin(), raw->end());
  const unsigned char* p = raw->data();
  std::unique_ptr<ASN1_UTF8STRING, decltype(&ASN1_UTF8STRING_free)> s(
      d2i_ASN1_UTF8STRING(nullptr, &p, static_cast<long>(raw->size())), ASN1_UTF8STRING_free);
  if (!s || p != raw->data() + raw->size()) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s.get())),
                     static_cast<size_t>(ASN1_STRING_length(s.get())));
}

// Step 1: the chain at the signed time. Every Fulcio certificate is an anchor (partial chains),
// as sigstore-python's store holds them all. Returns the issuer of the leaf.
Expected<CertRef> verify_chain(X509* leaf, const SigstoreTrustRoot::Impl& root, std::int64_t at) {
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(), X509_STORE_free);
  for (const auto& c : root.fulcio_certs) X509_STORE_add_cert(store.get(), c.get());
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(X509_STORE_CTX_new(), X509_STORE_CTX_free);
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), leaf, nullptr) != 1) return failed("cannot set up chain check");
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(at));
  X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_X509_STRICT);
  if (X509_verify_cert(ctx.get()) != 1) {
    return failed(std::string("signing certificate does not chain to a trusted Fulcio CA at the signing time: ") +
                  X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get())));
  }
  STACK_OF(X509)* chain = X509_STORE_CTX_get0_chain(ctx.get());
  if (sk_X509_num(chain) < 2) return failed("signing certificate is itself a trust anchor");
  X509* issuer = sk_X509_value(chain, 1);
  X509_up_ref(issuer);
  return CertRef(issuer, X509_free);
}

void put_be(Bytes& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// Step 2: the embedded precertificate SCT (RFC 6962 §3.2), signed by a trusted CT log.
Status verify_sct(X509* leaf, X509* issuer, const SigstoreTrustRoot::Impl& root) {
  using SctList = STACK_OF(SCT);
  std::unique_ptr<SctList, void (*)(SctList*)> scts(
      static_cast<SctList*>(X509_get_ext_d2i(leaf, NID_ct_precert_scts, nullptr, nullptr)), SCT_LIST_free);
  if (!scts) return failed("signing certificate has no signed certificate timestamp (SCT)");
  if (sk_SCT_num(scts.get()) != 1) {
    return failed("expected one SCT in the signing certificate, found " + std::to_string(sk_SCT_num(scts.get())));
  }
  const SCT* sct = sk_SCT_value(scts.get(), 0);
  if (SCT_get_version(sct) != SCT_VERSION_V1) return failed("SCT is not version 1");
  if (SCT_get_signature_nid(sct) != NID_ecdsa_with_SHA256 && SCT_get_signature_nid(sct) != NID_sha256WithRSAEncryption) {
    return failed("SCT is not signed with SHA-256");
  }
  if (X509_check_ca(issuer) == 0) return failed("SCT issuer is not a CA");
  // The precertificate's TBS: the final TBS without the SCT list.
  std::unique_ptr<X509, decltype(&X509_free)> pre(X509_dup(leaf), X509_free);
  const int idx = pre ? X509_get_ext_by_NID(pre.get(), NID_ct_precert_scts, -1) : -1;
  if (idx < 0) return failed("cannot rebuild the precertificate");
  X509_EXTENSION_free(X509_delete_ext(pre.get(), idx));
  unsigned char* tbs_der = nullptr;
  const int tbs_len = i2d_re_X509_tbs(pre.get(), &tbs_der);
  const std::unique_ptr<unsigned char, void (*)(unsigned char*)> tbs(tbs_der, [](unsigned char* p) { OPENSSL_free(p); });
  if (tbs_len <= 0 || tbs_len >= (1 << 24)) return failed("cannot encode the precertificate");
  Bytes signed_data;
  put_be(signed_data, 0, 1);  // sct_version v1
  put_be(signed_data, 0, 1);  // signature_type certificate_timestamp
  put_be(signed_data, SCT_get_timestamp(sct), 8);
  put_be(signed_data, 1, 2);  // entry_type precert_entry
  const Bytes issuer_key_hash = key_id_of(X509_get0_pubkey(issuer));
  signed_data.insert(signed_data.end(), issuer_key_hash.begin(), issuer_key_hash.end());
  put_be(signed_data, static_cast<std::uint64_t>(tbs_len), 3);
  signed_data.insert(signed_data.end(), tbs.get(), tbs.get() + tbs_len);
  unsigned char* ext = nullptr;
  const size_t ext_len = SCT_get0_extensions(sct, &ext);
  put_be(signed_data, ext_len, 2);
  signed_data.insert(signed_data.end(), ext, ext + ext_len);
  unsigned char* log_id = nullptr;
  const size_t log_id_len = SCT_get0_log_id(sct, &log_id);
  unsigned char* sig = nullptr;
  const size_t sig_len = SCT_get0_signature(sct, &sig);
  if (keyring_verify(root.ctlogs, {log_id, log_id_len}, signed_data, {sig, sig_len})) return {};
  return failed("SCT signature does not verify with a trusted CT log key");
}

// Step 3: the Sigstore X.509 profile and kernels' identity policy.
Status verify_identity(X509* leaf, const std::vector<GitHubWorkflowIdentity>& identities) {
  // OpenSSL reports every usage for a certificate without the extension; sigstore-python needs both.
  const uint32_t present = X509_get_extension_flags(leaf);
  if (!(present & EXFLAG_KUSAGE) || !(X509_get_key_usage(leaf) & KU_DIGITAL_SIGNATURE)) {
    return failed("key usage is not digital signature");
  }
  if (!(present & EXFLAG_XKUSAGE) || !(X509_get_extended_key_usage(leaf) & XKU_CODE_SIGN)) {
    return failed("extended key usage lacks code signing");
  }
  const auto issuer_v1 = extension_text(leaf, "1.3.6.1.4.1.57264.1.1", false);
  const auto issuer_v2 = extension_text(leaf, "1.3.6.1.4.1.57264.1.8", true);
  const auto repository = extension_text(leaf, "1.3.6.1.4.1.57264.1.12", true);
  const auto signer = extension_text(leaf, "1.3.6.1.4.1.57264.1.9", true);
  if (issuer_v1 != kGitHubIssuer || issuer_v2 != kGitHubIssuer) {
    return failed("certificate's OIDC issuer is '" + issuer_v2.value_or(issuer_v1.value_or("")) + "', not GitHub Actions");
  }
  for (const auto& id : identities) {
    if (repository != "https://github.com/" + id.repository) continue;
    if (signer && std::find(id.signer_uris.begin(), id.signer_uris.end(), *signer) != id.signer_uris.end()) return {};
  }
  return failed("signed by " + signer.value_or("an unnamed workflow") + " of " + repository.value_or("no repository") +
                ", not a trusted workflow");
}

Expected<std::vector<std::int64_t>> signed_times(const KeylessBundle& b, const SigstoreTrustRoot::Impl& root) {
  std::vector<std::int64_t> times;
  if (!b.timestamps.empty()) {
    if (root.tsas.empty()) {
      return failed("bundle has RFC 3161 timestamps, and the trusted root lists no timestamp authority");
    }
    if (b.timestamps.size() > 32) return failed("too many signed timestamps (" + std::to_string(b.timestamps.size()) + " > 32)");
    for (size_t i = 0; i < b.timestamps.size(); ++i) {
      if (std::find(b.timestamps.begin(), b.timestamps.begin() + static_cast<long>(i), b.timestamps[i]) !=
          b.timestamps.begin() + static_cast<long>(i)) {
        return failed("duplicate RFC 3161 timestamp in the bundle");
      }
      for (const auto& tsa : root.tsas) {
        if (auto t = verify_rfc3161(b.timestamps[i], b.signature, tsa)) {
          times.push_back(*t);
          break;
        }
      }
    }
  }
  const LogEntry& e = b.entry;
  if (e.integrated_time && !e.signed_entry_timestamp.empty()) {
    if (!((e.kind == "hashedrekord" || e.kind == "dsse") && e.version == "0.0.1")) {
      return failed("integrated time is only defined for hashedrekord and dsse 0.0.1 entries");
    }
    times.push_back(*e.integrated_time);
  }
  if (times.empty()) {
    return failed("bundle has no verified signing time (neither a Rekor signed entry timestamp nor a valid "
                  "RFC 3161 timestamp)");
  }
  return times;
}

}  // namespace

Status verify_keyless_bundle(std::string_view artifact, std::string_view bundle_json, const SigstoreTrustRoot& trust,
                             const std::vector<GitHubWorkflowIdentity>& identities) {
  KHUB_TRY(auto b, parse_bundle(bundle_json));
  const auto& root = trust.impl();
  const LogEntry& e = b.entry;
  // 0: the signed times: every RFC 3161 timestamp that verifies (one that does not is dropped, as
  // sigstore-python drops it), and Rekor v1's integrated time when a SET vouches for it.
  KHUB_TRY(std::vector<std::int64_t> times, signed_times(b, root));
  // 1–3: the certificate, valid at every signed time.
  CertRef issuer;
  for (const std::int64_t t : times) {
    KHUB_TRY(issuer, verify_chain(b.leaf.get(), root, t));
  }
  KHUB_CHECK(verify_sct(b.leaf.get(), issuer.get(), root));
  KHUB_CHECK(verify_identity(b.leaf.get(), identities));
  // 4–5: the log entry.
  KHUB_CHECK(verify_log_entry(e, root.tlogs));
  // 6: signed while the certificate was valid.
  for (const std::int64_t t : times) {
    time_t when = static_cast<time_t>(t);
    if (X509_cmp_time(X509_get0_notBefore(b.leaf.get()), &when) > 0 ||
        X509_cmp_time(X509_get0_notAfter(b.leaf.get()), &when) < 0) {
      return failed("signing certificate was not valid at a signed time of the bundle");
    }
  }
  // 7: the signature over the artifact.
  const auto* data = reinterpret_cast<const std::uint8_t*>(artifact.data());
  const Bytes digest = sha256_of({data, artifact.size()});
  if (!b.message_digest.empty() && b.message_digest != digest) return failed("bundle message digest mismatch");
  std::shared_ptr<EVP_PKEY> leaf_key(X509_get_pubkey(b.leaf.get()), EVP_PKEY_free);
  if (!leaf_key || !verify_signature(leaf_key.get(), {data, artifact.size()}, b.signature)) {
    return failed("signature is invalid for metadata.json");
  }
  // 8: the log entry records this very signature.
  if (e.kind != "hashedrekord") return failed("expected a hashedrekord log entry, got " + e.kind);
  return verify_log_body(b, digest);
}

}  // namespace khub::signing
