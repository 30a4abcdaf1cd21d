// Keyless bundle verification, in sigstore-python's order (Verifier.verify_artifact, steps 0–8).
#include <openssl/asn1.h>
#include <openssl/ct.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <ctime>
#include <cstring>
#include <optional>

#include <nlohmann/json.hpp>

#include "khub/base/hash.h"
#include "sigstore_internal.h"

namespace khub::protocol {
namespace {

using Json = nlohmann::json;
using namespace sigstore_detail;

constexpr std::string_view kGitHubIssuer = "https://token.actions.githubusercontent.com";

Error invalid(const std::string& what) {
  return Error(ErrorCode::InvalidMetadata, "signature bundle: " + what);
}
Error failed(const std::string& what) { return Error(ErrorCode::Signature, what); }

// sha256 of [prefix byte] a b: RFC 6962 leaf (0) and node (1) hashes, or a plain digest.
Bytes sha256_of(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b = {}, int prefix = -1) {
  Hasher h(HashAlgorithm::Sha256);
  const std::byte p{static_cast<unsigned char>(prefix)};
  if (prefix >= 0) h.update(std::span<const std::byte>(&p, 1));
  h.update(std::as_bytes(a));
  h.update(std::as_bytes(b));
  return h.finish();
}

// ---- the bundle --------------------------------------------------------------------------------

struct LogEntry {
  std::int64_t log_index = 0;
  Bytes log_id;
  std::string kind, version;
  std::optional<std::int64_t> integrated_time;
  Bytes signed_entry_timestamp;  // empty: no inclusion promise
  std::int64_t proof_index = 0, tree_size = 0;
  Bytes root_hash;
  std::vector<Bytes> proof_hashes;
  std::string checkpoint;
  Bytes body;  // canonicalizedBody, decoded
};

struct KeylessBundle {
  CertRef leaf;
  LogEntry entry;
  std::vector<Bytes> timestamps;  // RFC 3161 TimeStampResp DER
  Bytes message_digest;  // empty when absent
  std::string digest_algorithm;
  Bytes signature;
};

Expected<Bytes> b64_at(const Json& obj, const char* key, const std::string& where, bool required = true) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return invalid(where + "." + key + " missing");
    return Bytes{};
  }
  if (!it->is_string()) return invalid(where + "." + key + " is not a string");
  auto bytes = base64_decode(it->get<std::string>());
  if (!bytes) return invalid(where + "." + key + " is not Base64");
  return std::move(bytes).value();
}

// proto3 JSON writes int64 as a string; numbers are accepted too.
Expected<std::int64_t> int_at(const Json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) return invalid(where + "." + key + " missing");
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_string()) {
    const std::string s = it->get<std::string>();
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return v;
  }
  return invalid(where + "." + key + " is not an integer");
}

Expected<LogEntry> parse_entry(const Json& e) {
  const std::string w = "tlogEntries[0]";
  LogEntry out;
  KHUB_TRY(out.log_index, int_at(e, "logIndex", w));
  KHUB_TRY(out.log_id, b64_at(e.value("logId", Json::object()), "keyId", w + ".logId"));
  const Json kv = e.value("kindVersion", Json::object());
  out.kind = kv.value("kind", "");
  out.version = kv.value("version", "");
  if (e.contains("integratedTime")) {
    KHUB_TRY(auto t, int_at(e, "integratedTime", w));
    if (t != 0) out.integrated_time = t;  // proto3's default 0 means absent
  }
  if (e.contains("inclusionPromise")) {
    KHUB_TRY(out.signed_entry_timestamp, b64_at(e["inclusionPromise"], "signedEntryTimestamp", w + ".inclusionPromise"));
  }
  if (!e.contains("inclusionProof") || !e["inclusionProof"].is_object()) return invalid(w + ".inclusionProof missing");
  const Json& p = e["inclusionProof"];
  const std::string pw = w + ".inclusionProof";
  KHUB_TRY(out.proof_index, int_at(p, "logIndex", pw));
  KHUB_TRY(out.tree_size, int_at(p, "treeSize", pw));
  KHUB_TRY(out.root_hash, b64_at(p, "rootHash", pw));
  for (const auto& h : p.value("hashes", Json::array())) {
    auto bytes = h.is_string() ? base64_decode(h.get<std::string>()) : Expected<Bytes>(invalid(""));
    if (!bytes) return invalid(pw + ".hashes holds a value that is not Base64");
    out.proof_hashes.push_back(std::move(bytes).value());
  }
  out.checkpoint = p.value("checkpoint", Json::object()).value("envelope", "");
  if (out.checkpoint.empty()) return invalid(pw + ".checkpoint missing");
  KHUB_TRY(out.body, b64_at(e, "canonicalizedBody", w));
  return out;
}

Expected<KeylessBundle> parse_bundle(std::string_view text) {
  Json doc = Json::parse(text, nullptr, false);
  if (!doc.is_object()) return invalid("not JSON");
  const std::string media = doc.value("mediaType", "");
  const Json vm = doc.value("verificationMaterial", Json::object());
  KeylessBundle b;
  Bytes leaf_der;
  if (media == "application/vnd.dev.sigstore.bundle.v0.3+json" ||
      media == "application/vnd.dev.sigstore.bundle+json;version=0.3") {
    if (!vm.contains("certificate")) return invalid("expected a certificate in a v0.3 bundle");
    KHUB_TRY(leaf_der, b64_at(vm["certificate"], "rawBytes", "verificationMaterial.certificate"));
  } else if (media == "application/vnd.dev.sigstore.bundle+json;version=0.2") {
    // v0.2 carries a chain; its first certificate is the signing one.
    const Json certs = vm.value("x509CertificateChain", Json::object()).value("certificates", Json::array());
    if (certs.empty()) return invalid("expected a certificate chain in a v0.2 bundle");
    KHUB_TRY(leaf_der, b64_at(certs[0], "rawBytes", "verificationMaterial.x509CertificateChain.certificates[0]"));
  } else {
    return invalid("unsupported bundle format '" + media + "' (keyless verification reads v0.2 and v0.3)");
  }
  b.leaf = certificate_from_der(leaf_der);
  if (!b.leaf) return invalid("the signing certificate is not DER X.509");
  const Json entries = vm.value("tlogEntries", Json::array());
  if (entries.size() != 1) return invalid("expected exactly one log entry, found " + std::to_string(entries.size()));
  KHUB_TRY(b.entry, parse_entry(entries[0]));
  const Json tsd = vm.value("timestampVerificationData", Json::object());
  for (const auto& t : tsd.value("rfc3161Timestamps", Json::array())) {
    KHUB_TRY(auto der, b64_at(t, "signedTimestamp", "verificationMaterial.timestampVerificationData.rfc3161Timestamps[]"));
    // An undecodable token makes the bundle invalid; one that decodes but does not verify is dropped later.
    if (!is_rfc3161_response(der)) return invalid("an RFC 3161 timestamp is not a TimeStampResp");
    b.timestamps.push_back(std::move(der));
  }
  if (b.entry.version != "0.0.1" && b.entry.version != "0.0.2") {
    return invalid("log entry version " + b.entry.version + " (expected 0.0.1 or 0.0.2)");
  }
  if (!doc.contains("messageSignature")) return invalid("no messageSignature (DSSE bundles do not sign metadata.json)");
  const Json& ms = doc["messageSignature"];
  KHUB_TRY(b.signature, b64_at(ms, "signature", "messageSignature"));
  if (ms.contains("messageDigest")) {
    b.digest_algorithm = ms["messageDigest"].value("algorithm", "");
    KHUB_TRY(b.message_digest, b64_at(ms["messageDigest"], "digest", "messageSignature.messageDigest"));
  }
  return b;
}

// ---- the certificate ---------------------------------------------------------------------------

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
  unsigned char* tbs = nullptr;
  const int tbs_len = i2d_re_X509_tbs(pre.get(), &tbs);
  if (tbs_len <= 0 || tbs_len >= (1 << 24)) return failed("cannot encode the precertificate");
  Bytes signed_data;
  put_be(signed_data, 0, 1);  // sct_version v1
  put_be(signed_data, 0, 1);  // signature_type certificate_timestamp
  put_be(signed_data, SCT_get_timestamp(sct), 8);
  put_be(signed_data, 1, 2);  // entry_type precert_entry
  X509_PUBKEY* issuer_key = X509_get_X509_PUBKEY(issuer);
  unsigned char* spki = nullptr;
  const int spki_len = i2d_X509_PUBKEY(issuer_key, &spki);
  const Bytes issuer_key_hash = sha256_of({spki, static_cast<size_t>(std::max(spki_len, 0))});
  OPENSSL_free(spki);
  signed_data.insert(signed_data.end(), issuer_key_hash.begin(), issuer_key_hash.end());
  put_be(signed_data, static_cast<std::uint64_t>(tbs_len), 3);
  signed_data.insert(signed_data.end(), tbs, tbs + tbs_len);
  OPENSSL_free(tbs);
  unsigned char* ext = nullptr;
  const size_t ext_len = SCT_get0_extensions(sct, &ext);
  put_be(signed_data, ext_len, 2);
  signed_data.insert(signed_data.end(), ext, ext + ext_len);
  unsigned char* log_id = nullptr;
  const size_t log_id_len = SCT_get0_log_id(sct, &log_id);
  unsigned char* sig = nullptr;
  const size_t sig_len = SCT_get0_signature(sct, &sig);
  for (const auto& log : root.ctlogs) {
    if (log.key_id.size() != log_id_len || !std::equal(log.key_id.begin(), log.key_id.end(), log_id)) continue;
    if (verify_signature(log.key.get(), signed_data, {sig, sig_len})) return {};
    return failed("SCT signature does not verify with its CT log's key");
  }
  return failed("SCT is from a CT log the trusted root does not list");
}

// Step 3: the Sigstore X.509 profile and kernels' identity policy.
Status verify_identity(X509* leaf, const std::vector<GitHubWorkflowIdentity>& identities) {
  if (!(X509_get_key_usage(leaf) & KU_DIGITAL_SIGNATURE)) return failed("key usage is not digital signature");
  if (!(X509_get_extended_key_usage(leaf) & XKU_CODE_SIGN)) return failed("extended key usage lacks code signing");
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

// ---- the log entry -----------------------------------------------------------------------------

// RFC 6962 inclusion: the leaf's path up to the root, inner part then right border.
Status verify_inclusion(const LogEntry& e) {
  if (e.proof_index < 0 || e.tree_size <= 0 || e.proof_index >= e.tree_size) {
    return failed("inclusion proof index " + std::to_string(e.proof_index) + " is outside its tree of " +
                  std::to_string(e.tree_size));
  }
  const auto index = static_cast<std::uint64_t>(e.proof_index);
  const auto last = static_cast<std::uint64_t>(e.tree_size - 1);
  const int inner = std::bit_width(index ^ last);
  const int border = std::popcount(index >> inner);
  if (e.proof_hashes.size() != static_cast<size_t>(inner + border)) {
    return failed("inclusion proof has " + std::to_string(e.proof_hashes.size()) + " hashes, expected " +
                  std::to_string(inner + border));
  }
  Bytes h = sha256_of(e.body, {}, 0);
  for (int i = 0; i < inner; ++i) {
    h = ((index >> i) & 1) == 0 ? sha256_of(h, e.proof_hashes[i], 1) : sha256_of(e.proof_hashes[i], h, 1);
  }
  for (size_t i = static_cast<size_t>(inner); i < e.proof_hashes.size(); ++i) h = sha256_of(e.proof_hashes[i], h, 1);
  if (h != e.root_hash) return failed("inclusion proof does not lead to its root hash");
  return {};
}

const LogKey* rekor_key(const SigstoreTrustRoot::Impl& root, const Bytes& id) {
  for (const auto& k : root.tlogs) {
    if (k.key_id == id) return &k;
  }
  return nullptr;
}

// The signed checkpoint (a signed note): its first signature whose 4-byte hint is the log's key
// id must verify over the note text, and the note's root hash must be the proof's.
Status verify_checkpoint(const LogEntry& e, const LogKey& key) {
  const std::string& text = e.checkpoint;
  const size_t split = text.find("\n\n");
  if (split == std::string::npos || text.find("\n\n", split + 1) != std::string::npos) {
    return failed("checkpoint must hold one blank line between note and signatures");
  }
  const std::string note = text.substr(0, split + 1);
  std::string_view sigs = std::string_view(text).substr(split + 2);
  if (sigs.empty() || sigs.back() != '\n') return failed("checkpoint signatures must end with a newline");
  constexpr std::string_view kDash = "\xE2\x80\x94 ";  // U+2014 EM DASH, then a space
  bool verified = false;
  while (!sigs.empty()) {
    const size_t eol = sigs.find('\n');
    std::string_view line = sigs.substr(0, eol);
    sigs.remove_prefix(eol + 1);
    if (line.substr(0, kDash.size()) != kDash) continue;
    line.remove_prefix(kDash.size());
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0) continue;
    auto raw = base64_decode(line.substr(space + 1));
    if (!raw || raw->size() < 5) return failed("checkpoint signature is malformed");
    if (!std::equal(raw->begin(), raw->begin() + 4, key.key_id.begin())) continue;
    if (!verify_signature(key.key.get(), {reinterpret_cast<const std::uint8_t*>(note.data()), note.size()},
                          {raw->data() + 4, raw->size() - 4})) {
      return failed("checkpoint signature does not verify with the log's key");
    }
    verified = true;
    break;
  }
  if (!verified) return failed("checkpoint has no signature by the entry's log");
  // Note lines: origin, tree size, base64 root hash, then optional extra lines.
  std::vector<std::string_view> lines;
  std::string_view rest = note;
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    lines.push_back(rest.substr(0, eol));
    rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
  }
  if (lines.size() < 3 || lines[0].empty()) return failed("checkpoint note is malformed");
  auto root_hash = base64_decode(lines[2]);
  if (!root_hash || *root_hash != e.root_hash) return failed("checkpoint's root hash is not the inclusion proof's");
  return {};
}

// The signed entry timestamp signs RFC 8785 JSON of these four keys (sorted; Base64 and hex need
// no escaping).
Status verify_set(const LogEntry& e, const LogKey& key) {
  const std::string payload = "{\"body\":\"" + base64_encode(e.body) + "\",\"integratedTime\":" +
                              std::to_string(*e.integrated_time) + ",\"logID\":\"" + to_hex(e.log_id) +
                              "\",\"logIndex\":" + std::to_string(e.log_index) + "}";
  if (!verify_signature(key.key.get(), {reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()},
                        e.signed_entry_timestamp)) {
    return failed("log entry's signed entry timestamp does not verify");
  }
  return {};
}

std::optional<Bytes> pem_to_der(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr,
                                                   X509_free);
  if (!cert) return std::nullopt;
  unsigned char* der = nullptr;
  const int len = i2d_X509(cert.get(), &der);
  if (len <= 0) return std::nullopt;
  Bytes out(der, der + len);
  OPENSSL_free(der);
  return out;
}

// Step 8: the hashedrekord 0.0.1 entry records this signature, certificate and digest.
Status verify_body(const KeylessBundle& b, const Bytes& artifact_digest) {
  const Json body = Json::parse(b.entry.body.begin(), b.entry.body.end(), nullptr, false);
  const std::string mismatch = "transparency log entry is inconsistent with the bundle";
  if (!body.is_object() || body.value("kind", "") != "hashedrekord" || body.value("apiVersion", "") != "0.0.1") {
    return failed(mismatch + " (not a hashedrekord 0.0.1 entry)");
  }
  const Json spec = body.value("spec", Json::object());
  const Json hash = spec.value("data", Json::object()).value("hash", Json::object());
  if (hash.value("algorithm", "") != "sha256" || hash.value("value", "") != to_hex(artifact_digest)) {
    return failed(mismatch + " (digest)");
  }
  const Json sig = spec.value("signature", Json::object());
  auto content = base64_decode(sig.value("content", ""));
  if (!content || *content != b.signature) return failed(mismatch + " (signature)");
  auto pem = base64_decode(sig.value("publicKey", Json::object()).value("content", ""));
  unsigned char* leaf_der = nullptr;
  const int leaf_len = i2d_X509(b.leaf.get(), &leaf_der);
  const Bytes leaf(leaf_der, leaf_der + std::max(leaf_len, 0));
  OPENSSL_free(leaf_der);
  auto der = pem ? pem_to_der({reinterpret_cast<const char*>(pem->data()), pem->size()}) : std::nullopt;
  if (!der || *der != leaf) return failed(mismatch + " (certificate)");
  return {};
}

// Step 0 (sigstore-python's _establish_time): at most 32 distinct timestamps, each verified against
// the trusted root's timestamp authorities, plus the log's integrated time where a SET signs it.
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
  if (e.version != "0.0.1") {
    return failed("Rekor v2 log entries (" + e.kind + " " + e.version + ") are not supported yet; khub reads Rekor v1's");
  }
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
  const LogKey* key = rekor_key(root, e.log_id);
  if (!key) return failed("log entry is from a transparency log the trusted root does not list");
  KHUB_CHECK(verify_inclusion(e));
  KHUB_CHECK(verify_checkpoint(e, *key));
  if (e.integrated_time && !e.signed_entry_timestamp.empty()) KHUB_CHECK(verify_set(e, *key));
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
  return verify_body(b, digest);
}

}  // namespace khub::protocol
