// RFC 3161 timestamps of a keyless bundle (verificationMaterial.timestampVerificationData).
#include <openssl/pkcs7.h>
#include <openssl/ts.h>

#include <ctime>

#include "khub/base/hash.h"
#include "sigstore_internal.h"

namespace khub::signing::sigstore_detail {
namespace {

template <class T, void (*F)(T*)>
struct Free {
  void operator()(T* p) const { F(p); }
};
using RespPtr = std::unique_ptr<TS_RESP, Free<TS_RESP, TS_RESP_free>>;
using StorePtr = std::unique_ptr<X509_STORE, Free<X509_STORE, X509_STORE_free>>;

std::optional<std::int64_t> time_of(const ASN1_GENERALIZEDTIME* t) {
  std::tm tm{};
  if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return std::nullopt;
  return static_cast<std::int64_t>(timegm(&tm));
}

// The imprint must be the digest of `message` under the token's own algorithm.
bool imprint_matches(TS_TST_INFO* info, std::span<const std::uint8_t> message) {
  TS_MSG_IMPRINT* imprint = TS_TST_INFO_get_msg_imprint(info);
  const X509_ALGOR* algo = TS_MSG_IMPRINT_get_algo(imprint);
  const ASN1_OBJECT* oid = nullptr;
  X509_ALGOR_get0(&oid, nullptr, nullptr, algo);
  const EVP_MD* md = oid ? EVP_get_digestbyobj(oid) : nullptr;
  if (!md) return false;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(message.data(), message.size(), digest, &len, md, nullptr) != 1) return false;
  const ASN1_OCTET_STRING* expected = TS_MSG_IMPRINT_get_msg(imprint);
  return expected && static_cast<unsigned int>(ASN1_STRING_length(expected)) == len &&
         std::equal(digest, digest + len, ASN1_STRING_get0_data(expected));
}

RespPtr decode(std::span<const std::uint8_t> der) {
  const unsigned char* p = der.data();
  RespPtr resp(d2i_TS_RESP(nullptr, &p, static_cast<long>(der.size())));
  return resp && p == der.data() + der.size() ? std::move(resp) : nullptr;
}

}  // namespace

bool is_rfc3161_response(std::span<const std::uint8_t> der) { return decode(der) != nullptr; }

std::optional<std::int64_t> verify_rfc3161(std::span<const std::uint8_t> token, std::span<const std::uint8_t> message,
                                           const SigstoreTrustRoot::Impl::Authority& tsa) {
  // A signing certificate and a root at least, and an authority that has started (sigstore-python
  // skips the others).
  if (tsa.chain.size() < 2 || tsa.valid.start > static_cast<std::int64_t>(std::time(nullptr))) return std::nullopt;
  RespPtr resp = decode(token);
  if (!resp) return std::nullopt;
  const long status = ASN1_INTEGER_get(TS_STATUS_INFO_get0_status(TS_RESP_get_status_info(resp.get())));
  if (status != TS_STATUS_GRANTED) return std::nullopt;  // rfc3161-client takes "granted" only
  TS_TST_INFO* info = TS_RESP_get_tst_info(resp.get());
  PKCS7* signed_data = TS_RESP_get_token(resp.get());
  if (!info || !signed_data || TS_TST_INFO_get_version(info) != 1) return std::nullopt;
  const auto when = time_of(TS_TST_INFO_get_time(info));
  if (!when || !imprint_matches(info, message)) return std::nullopt;
  // Every certificate of the authority is in the store (rfc3161-client's), and the chain is checked
  // at the token's own time: the certificates may have expired since.
  StorePtr store(X509_STORE_new());
  for (const auto& c : tsa.chain) X509_STORE_add_cert(store.get(), c.get());
  X509_VERIFY_PARAM* param = X509_STORE_get0_param(store.get());
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(*when));
  struct StackFree {
    void operator()(STACK_OF(X509) * s) const { sk_X509_free(s); }  // the certificates stay the root's
  };
  std::unique_ptr<STACK_OF(X509), StackFree> untrusted(sk_X509_new_null());
  for (const auto& c : tsa.chain) sk_X509_push(untrusted.get(), c.get());
  X509* signer = nullptr;
  if (TS_RESP_verify_signature(signed_data, untrusted.get(), store.get(), &signer) != 1) return std::nullopt;
  // The token must be signed by this authority's own signing certificate, not by another one the
  // token carries that happens to chain to the same root.
  const bool pinned = signer && X509_cmp(signer, tsa.chain.front().get()) == 0;
  X509_free(signer);
  if (!pinned) return std::nullopt;
  if (*when < tsa.valid.start || *when >= tsa.valid.end) return std::nullopt;
  return when;
}

}  // namespace khub::signing::sigstore_detail
