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

#include "khub/protocol/sigstore.h"

namespace khub::protocol {

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

/// An RFC 3161 TimeStampResp (DER) over `message` (the bundle's signature bytes), as sigstore-python
/// (rfc3161-client) checks it against one timestamp authority: granted, version 1, the message
/// imprint, signed by the authority's first certificate, which chains to its last at the token's
/// time, inside the authority's validFor. The token's time, or nullopt when any of it fails.
/// True when `der` decodes as one TimeStampResp.
bool is_rfc3161_response(std::span<const std::uint8_t> der);

std::optional<std::int64_t> verify_rfc3161(std::span<const std::uint8_t> token, std::span<const std::uint8_t> message,
                                           const SigstoreTrustRoot::Impl::Authority& tsa);

}  // namespace sigstore_detail
}  // namespace khub::protocol
