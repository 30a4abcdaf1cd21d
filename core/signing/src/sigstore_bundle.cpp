// Reading a keyless bundle (protobuf-specs JSON, media types v0.2 and v0.3).
#include <algorithm>
#include <charconv>

#include <nlohmann/json.hpp>

#include "khub/base/hash.h"
#include "khub/json/fields.h"
#include "sigstore_internal.h"

namespace khub::signing::sigstore_detail {
namespace {

using Json = nlohmann::json;
using namespace json_fields;

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
  KHUB_TRY(out.log_id, b64_at(object(e, "logId"), "keyId", w + ".logId"));
  out.kind = text(object(e, "kindVersion"), "kind");
  out.version = text(object(e, "kindVersion"), "version");
  if (e.contains("integratedTime")) {
    KHUB_TRY(auto t, int_at(e, "integratedTime", w));
    if (t != 0) out.integrated_time = t;  // proto3's default 0 means absent
  }
  if (!field(e, "inclusionPromise").is_null()) {
    KHUB_TRY(out.signed_entry_timestamp,
             b64_at(object(e, "inclusionPromise"), "signedEntryTimestamp", w + ".inclusionPromise"));
  }
  if (!field(e, "inclusionProof").is_object()) return invalid(w + ".inclusionProof missing");
  const Json& p = object(e, "inclusionProof");
  const std::string pw = w + ".inclusionProof";
  KHUB_TRY(out.proof_index, int_at(p, "logIndex", pw));
  KHUB_TRY(out.tree_size, int_at(p, "treeSize", pw));
  KHUB_TRY(out.root_hash, b64_at(p, "rootHash", pw));
  for (const auto& h : array(p, "hashes")) {
    auto bytes = h.is_string() ? base64_decode(h.get<std::string>()) : Expected<Bytes>(invalid(""));
    if (!bytes) return invalid(pw + ".hashes holds a value that is not Base64");
    out.proof_hashes.push_back(std::move(bytes).value());
  }
  out.checkpoint = text(object(p, "checkpoint"), "envelope");
  if (out.checkpoint.empty()) return invalid(pw + ".checkpoint missing");
  KHUB_TRY(out.body, b64_at(e, "canonicalizedBody", w));
  return out;
}

// A message field present with the wrong JSON type makes the bundle invalid, as sigstore-python's
// parser refuses it (khub's reads would otherwise take it as absent).
Status check_types(const Json& doc) {
  using T = Json::value_t;
  struct Rule {
    const char* path;  // JSON pointer
    T type;
  };
  static constexpr Rule kRules[] = {
      {"/mediaType", T::string},
      {"/verificationMaterial", T::object},
      {"/verificationMaterial/certificate", T::object},
      {"/verificationMaterial/x509CertificateChain", T::object},
      {"/verificationMaterial/x509CertificateChain/certificates", T::array},
      {"/verificationMaterial/tlogEntries", T::array},
      {"/verificationMaterial/timestampVerificationData", T::object},
      {"/verificationMaterial/timestampVerificationData/rfc3161Timestamps", T::array},
      {"/verificationMaterial/tlogEntries/0", T::object},
      {"/verificationMaterial/tlogEntries/0/logId", T::object},
      {"/verificationMaterial/tlogEntries/0/kindVersion", T::object},
      {"/verificationMaterial/tlogEntries/0/kindVersion/kind", T::string},
      {"/verificationMaterial/tlogEntries/0/kindVersion/version", T::string},
      {"/verificationMaterial/tlogEntries/0/inclusionPromise", T::object},
      {"/verificationMaterial/tlogEntries/0/inclusionProof", T::object},
      {"/verificationMaterial/tlogEntries/0/inclusionProof/hashes", T::array},
      {"/verificationMaterial/tlogEntries/0/inclusionProof/checkpoint", T::object},
      {"/verificationMaterial/tlogEntries/0/inclusionProof/checkpoint/envelope", T::string},
      {"/messageSignature", T::object},
      {"/messageSignature/messageDigest", T::object},
      {"/messageSignature/messageDigest/algorithm", T::string},
  };
  for (const auto& rule : kRules) {
    const Json::json_pointer ptr(rule.path);
    // contains() walks only objects and arrays, so a wrong-typed parent was refused by an earlier rule.
    if (!doc.contains(ptr)) continue;
    const Json& v = doc.at(ptr);
    if (!v.is_null() && v.type() != rule.type) return invalid(std::string(rule.path).substr(1) + " has the wrong JSON type");
  }
  return {};
}

}  // namespace

Expected<KeylessBundle> parse_bundle(std::string_view text) {
  Json doc = json_fields::parse_untrusted(text);
  if (!doc.is_object()) return invalid("not JSON");
  KHUB_CHECK(check_types(doc));
  const std::string media = json_fields::text(doc, "mediaType");
  const Json& vm = object(doc, "verificationMaterial");
  KeylessBundle b;
  Bytes leaf_der;
  if (media == "application/vnd.dev.sigstore.bundle.v0.3+json" ||
      media == "application/vnd.dev.sigstore.bundle+json;version=0.3") {
    if (field(vm, "certificate").is_null()) return invalid("expected a certificate in a v0.3 bundle");
    KHUB_TRY(leaf_der, b64_at(object(vm, "certificate"), "rawBytes", "verificationMaterial.certificate"));
  } else if (media == "application/vnd.dev.sigstore.bundle+json;version=0.2") {
    // v0.2 carries a chain; its first certificate is the signing one.
    const Json& certs = array(object(vm, "x509CertificateChain"), "certificates");
    if (certs.empty()) return invalid("expected a certificate chain in a v0.2 bundle");
    KHUB_TRY(leaf_der, b64_at(certs[0], "rawBytes", "verificationMaterial.x509CertificateChain.certificates[0]"));
  } else {
    return invalid("unsupported bundle format '" + media + "' (keyless verification reads v0.2 and v0.3)");
  }
  b.leaf = certificate_from_der(leaf_der);
  if (!b.leaf) return invalid("the signing certificate is not DER X.509");
  const Json& entries = array(vm, "tlogEntries");
  if (entries.size() != 1) return invalid("expected exactly one log entry, found " + std::to_string(entries.size()));
  KHUB_TRY(b.entry, parse_entry(entries[0]));
  for (const auto& t : array(object(vm, "timestampVerificationData"), "rfc3161Timestamps")) {
    KHUB_TRY(auto der, b64_at(t, "signedTimestamp", "verificationMaterial.timestampVerificationData.rfc3161Timestamps[]"));
    // An undecodable token makes the bundle invalid; one that decodes but does not verify is dropped later.
    if (!is_rfc3161_response(der)) return invalid("an RFC 3161 timestamp is not a TimeStampResp");
    b.timestamps.push_back(std::move(der));
  }
  if (b.entry.version != "0.0.1" && b.entry.version != "0.0.2") {
    return invalid("log entry version " + b.entry.version + " (expected 0.0.1 or 0.0.2)");
  }
  // A v0.2+ bundle needs some signed time: a SET or timestamps (sigstore-python refuses it as invalid).
  if (b.entry.signed_entry_timestamp.empty() && b.timestamps.empty()) {
    return invalid("bundle must contain an inclusion promise or signed timestamp(s)");
  }
  if (!field(doc, "messageSignature").is_object()) {
    return invalid("no messageSignature (DSSE bundles do not sign metadata.json)");
  }
  const Json& ms = object(doc, "messageSignature");
  KHUB_TRY(b.signature, b64_at(ms, "signature", "messageSignature"));
  if (!field(ms, "messageDigest").is_null()) {
    b.digest_algorithm = json_fields::text(object(ms, "messageDigest"), "algorithm");
    // protobuf-specs' HashAlgorithm names; sigstore-python compares the digest bytes whatever it says.
    static constexpr std::string_view kAlgorithms[] = {"",         "HASH_ALGORITHM_UNSPECIFIED", "SHA2_256", "SHA2_384",
                                                       "SHA2_512", "SHA3_256",                   "SHA3_384"};
    if (std::find(std::begin(kAlgorithms), std::end(kAlgorithms), b.digest_algorithm) == std::end(kAlgorithms)) {
      return invalid("messageSignature.messageDigest.algorithm '" + b.digest_algorithm + "' is not a hash algorithm");
    }
    KHUB_TRY(b.message_digest, b64_at(object(ms, "messageDigest"), "digest", "messageSignature.messageDigest"));
  }
  return b;
}

}  // namespace khub::signing::sigstore_detail
