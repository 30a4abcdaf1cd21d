#pragma once
// What the keyless verifier needs from OpenSSL and the parsed trusted root; inside src/ only.
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/signing/sigstore.h"

namespace khub::signing {

using Bytes = std::vector<std::uint8_t>;
using PkeyRef = std::shared_ptr<EVP_PKEY>;
using CertRef = std::shared_ptr<X509>;

namespace sigstore_detail {

/// Seconds since the epoch; an absent end is open.
struct Validity {
  std::int64_t start = std::numeric_limits<std::int64_t>::min();
  std::int64_t end = std::numeric_limits<std::int64_t>::max();
};

/// A log's key. `key_id` is RFC 6962's: sha256 of the key's DER SubjectPublicKeyInfo.
struct LogKey {
  Bytes key_id;
  PkeyRef key;
  Validity valid;
};

PkeyRef public_key_from_der(std::span<const std::uint8_t> spki_der);
CertRef certificate_from_der(std::span<const std::uint8_t> der);
Bytes key_id_of(EVP_PKEY* key);
/// ECDSA (SHA-256) or Ed25519 over `message`.
bool verify_signature(EVP_PKEY* key, std::span<const std::uint8_t> message, std::span<const std::uint8_t> signature);
/// sigstore-python's keyring: the key whose id is `key_id` or, when none is, every key (the id is
/// an unauthenticated hint); keys whose validity has not started yet are left out.
bool keyring_verify(const std::vector<LogKey>& keys, std::span<const std::uint8_t> key_id,
                    std::span<const std::uint8_t> message, std::span<const std::uint8_t> signature);
/// RFC 3339 ("2022-04-13T20:06:15.000Z"); nullopt when malformed.
std::optional<std::int64_t> parse_rfc3339(std::string_view text);

}  // namespace sigstore_detail

struct SigstoreTrustRoot::Impl {
  /// A certificate authority (Fulcio or RFC 3161 timestamps): its chain, leaf-most first, root last.
  struct Authority {
    std::vector<CertRef> chain;
    sigstore_detail::Validity valid;
  };
  std::vector<sigstore_detail::LogKey> tlogs;
  std::vector<sigstore_detail::LogKey> ctlogs;
  /// Every certificate of every Fulcio CA chain: each is a trust anchor, as in sigstore-python's
  /// chain store (expired CAs too: they may have been valid at signing time).
  std::vector<CertRef> fulcio_certs;
  std::vector<Authority> tsas;  // timestamp authorities
};

namespace sigstore_detail {

/// A failed check (Signature) and an unreadable bundle (InvalidMetadata), one line each.
inline Error failed(const std::string& what) { return Error(ErrorCode::Signature, what); }
inline Error invalid(const std::string& what) { return Error(ErrorCode::InvalidMetadata, "signature bundle: " + what); }

/// sha256 of [prefix byte] a b: RFC 6962 leaf (0) and node (1) hashes, or a plain digest.
Bytes sha256_of(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b = {}, int prefix = -1);

/// A bundle's one transparency-log entry (Rekor v1 or v2, proto3 JSON names).
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

/// What verification reads from a keyless bundle.
struct KeylessBundle {
  CertRef leaf;
  LogEntry entry;
  std::vector<Bytes> timestamps;  // RFC 3161 TimeStampResp DER
  Bytes message_digest;           // empty when absent
  std::string digest_algorithm;
  Bytes signature;
};

/// Parses a v0.2 / v0.3 message-signature bundle with a certificate (sigstore_bundle.cpp).
Expected<KeylessBundle> parse_bundle(std::string_view text);

/// Steps 4–5: the inclusion proof, the signed checkpoint, and the SET where there is one, against
/// the trusted Rekor keys.
Status verify_log_entry(const LogEntry& entry, const std::vector<LogKey>& rekor_keys);
/// Step 8: the hashedrekord entry (0.0.1 or 0.0.2) records this signature, certificate and digest.
Status verify_log_body(const KeylessBundle& bundle, const Bytes& artifact_digest);

/// True when `der` decodes as one TimeStampResp.
bool is_rfc3161_response(std::span<const std::uint8_t> der);

/// An RFC 3161 TimeStampResp (DER) over `message` (the bundle's signature bytes), as sigstore-python
/// (rfc3161-client) checks it against one timestamp authority: granted, version 1, the message
/// imprint, signed by the authority's first certificate, whose chain (every certificate of the
/// authority in the store) holds at the token's time, inside the authority's validFor. The token's
/// time, or nullopt when any of it fails.
std::optional<std::int64_t> verify_rfc3161(std::span<const std::uint8_t> token, std::span<const std::uint8_t> message,
                                           const SigstoreTrustRoot::Impl::Authority& tsa);

}  // namespace sigstore_detail
}  // namespace khub::signing
