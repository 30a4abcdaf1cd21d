// The transparency-log entry of a keyless bundle: RFC 6962 inclusion, the signed checkpoint, the
// signed entry timestamp, and the entry's body against the bundle.
#include <openssl/pem.h>

#include <algorithm>
#include <bit>

#include <nlohmann/json.hpp>

#include "khub/base/hash.h"
#include "khub/json/fields.h"
#include "sigstore_internal.h"

namespace khub::signing::sigstore_detail {
namespace {

using Json = nlohmann::json;
using namespace json_fields;

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


// The signed checkpoint (a signed note): its first signature whose 4-byte hint is the entry's log
// id must verify over the note text, and the note's root hash must be the proof's.
Status verify_checkpoint(const LogEntry& e, const std::vector<LogKey>& keys) {
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
    if (e.log_id.size() < 4 || !std::equal(raw->begin(), raw->begin() + 4, e.log_id.begin())) continue;
    if (!keyring_verify(keys, e.log_id, {reinterpret_cast<const std::uint8_t*>(note.data()), note.size()},
                        {raw->data() + 4, raw->size() - 4})) {
      return failed("checkpoint signature does not verify with a trusted Rekor key");
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
Status verify_set(const LogEntry& e, const std::vector<LogKey>& keys) {
  const std::string payload = "{\"body\":\"" + base64_encode(e.body) + "\",\"integratedTime\":" +
                              std::to_string(*e.integrated_time) + ",\"logID\":\"" + to_hex(e.log_id) +
                              "\",\"logIndex\":" + std::to_string(e.log_index) + "}";
  if (!keyring_verify(keys, e.log_id, {reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()},
                      e.signed_entry_timestamp)) {
    return failed("log entry's signed entry timestamp does not verify");
  }
  return {};
}

// Whether `pem` holds the certificate `leaf` (X509_cmp compares the DER encodings).
bool pem_is(std::string_view pem, X509* leaf) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr,
                                                   X509_free);
  return cert && X509_cmp(cert.get(), leaf) == 0;
}

Bytes leaf_der(X509* leaf) {
  unsigned char* der = nullptr;
  const int len = i2d_X509(leaf, &der);
  Bytes out(der, der + std::max(len, 0));
  OPENSSL_free(der);
  return out;
}

std::optional<Bytes> b64_value(const Json& obj, const char* key) {
  auto bytes = base64_decode(text(obj, key));
  if (!bytes) return std::nullopt;
  return std::move(bytes).value();
}

// The protobuf-specs name of the signing key's kind, as Rekor v2 records it.
std::string key_details(X509* leaf) {
  std::shared_ptr<EVP_PKEY> key(X509_get_pubkey(leaf), EVP_PKEY_free);
  if (!key) return "";
  if (EVP_PKEY_get_base_id(key.get()) == EVP_PKEY_ED25519) return "PKIX_ED25519";
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_EC) return "";
  switch (EVP_PKEY_get_bits(key.get())) {
    case 256: return "PKIX_ECDSA_P256_SHA_256";
    case 384: return "PKIX_ECDSA_P384_SHA_384";
    case 521: return "PKIX_ECDSA_P521_SHA_512";
  }
  return "";
}

// Rekor v1: spec.data.hash {sha256, hex}, spec.signature {content, publicKey.content = base64 PEM}.
std::string body_v001_mismatch(const Json& spec, const KeylessBundle& b, const Bytes& digest) {
  const Json& hash = object(object(spec, "data"), "hash");
  if (text(hash, "algorithm") != "sha256" || text(hash, "value") != to_hex(digest)) return "digest";
  const Json& sig = object(spec, "signature");
  if (b64_value(sig, "content") != b.signature) return "signature";
  auto pem = b64_value(object(sig, "publicKey"), "content");
  if (!pem || !pem_is({reinterpret_cast<const char*>(pem->data()), pem->size()}, b.leaf.get())) return "certificate";
  return "";
}

// Rekor v2: spec.hashedRekordV002 {data {SHA2_256, base64 digest}, signature {content, verifier
// {x509Certificate.rawBytes, keyDetails}}}.
std::string body_v002_mismatch(const Json& spec, const KeylessBundle& b, const Bytes& digest) {
  const Json& entry = object(spec, "hashedRekordV002");
  const Json& data = object(entry, "data");
  if (text(data, "algorithm") != "SHA2_256" || b64_value(data, "digest") != digest) return "digest";
  const Json& sig = object(entry, "signature");
  if (b64_value(sig, "content") != b.signature) return "signature";
  const Json& verifier = object(sig, "verifier");
  if (b64_value(object(verifier, "x509Certificate"), "rawBytes") != leaf_der(b.leaf.get())) {
    return "certificate";
  }
  if (text(verifier, "keyDetails") != key_details(b.leaf.get())) return "key details";
  return "";
}

}  // namespace

Status verify_log_entry(const LogEntry& e, const std::vector<LogKey>& keys) {
  KHUB_CHECK(verify_inclusion(e));
  KHUB_CHECK(verify_checkpoint(e, keys));
  if (e.integrated_time && !e.signed_entry_timestamp.empty()) KHUB_CHECK(verify_set(e, keys));
  return {};
}

// Step 8: the hashedrekord entry (0.0.1 or 0.0.2, as the entry's kindVersion says) records this
// signature, certificate and digest.
Status verify_log_body(const KeylessBundle& b, const Bytes& artifact_digest) {
  const Json body = json_fields::parse_untrusted(std::string_view(reinterpret_cast<const char*>(b.entry.body.data()), b.entry.body.size()));
  const std::string mismatch = "transparency log entry is inconsistent with the bundle";
  if (!body.is_object() || text(body, "kind") != b.entry.kind || text(body, "apiVersion") != b.entry.version) {
    return failed(mismatch + " (kind or version)");
  }
  const Json& spec = object(body, "spec");
  const std::string what = b.entry.version == "0.0.2" ? body_v002_mismatch(spec, b, artifact_digest)
                                                      : body_v001_mismatch(spec, b, artifact_digest);
  if (!what.empty()) return failed(mismatch + " (" + what + ")");
  return {};
}

}  // namespace khub::signing::sigstore_detail
