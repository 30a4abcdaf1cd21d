// Reading a keyless bundle (protobuf-specs JSON, media types v0.2 and v0.3).
#include <charconv>

#include <nlohmann/json.hpp>

#include "khub/base/hash.h"
#include "sigstore_internal.h"

namespace khub::protocol::sigstore_detail {
namespace {

using Json = nlohmann::json;

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

}  // namespace

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
  // A v0.2+ bundle needs some signed time: a SET or timestamps (sigstore-python refuses it as invalid).
  if (b.entry.signed_entry_timestamp.empty() && b.timestamps.empty()) {
    return invalid("bundle must contain an inclusion promise or signed timestamp(s)");
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

}  // namespace khub::protocol::sigstore_detail
