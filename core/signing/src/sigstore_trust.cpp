#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <nlohmann/json.hpp>

#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/json/fields.h"
#include "sigstore_internal.h"

namespace khub::signing {
namespace sigstore_detail {

PkeyRef public_key_from_der(std::span<const std::uint8_t> der) {
  const unsigned char* p = der.data();
  if (EVP_PKEY* key = d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size()))) return PkeyRef(key, EVP_PKEY_free);
  // keyDetails PKCS1_RSA_PKCS1V5 keys are a bare PKCS #1 RSAPublicKey, not a SubjectPublicKeyInfo.
  p = der.data();
  return PkeyRef(d2i_PublicKey(EVP_PKEY_RSA, nullptr, &p, static_cast<long>(der.size())), EVP_PKEY_free);
}

CertRef certificate_from_der(std::span<const std::uint8_t> der) {
  const unsigned char* p = der.data();
  X509* cert = d2i_X509(nullptr, &p, static_cast<long>(der.size()));
  // Trailing bytes after the certificate are refused: the bytes must be one certificate.
  if (cert && p != der.data() + der.size()) {
    X509_free(cert);
    cert = nullptr;
  }
  return CertRef(cert, X509_free);
}

Bytes sha256_of(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b, int prefix) {
  Hasher h(HashAlgorithm::Sha256);
  const std::byte p{static_cast<unsigned char>(prefix)};
  if (prefix >= 0) h.update(std::span<const std::byte>(&p, 1));
  h.update(std::as_bytes(a));
  h.update(std::as_bytes(b));
  return h.finish();
}

Bytes key_id_of(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  const int len = i2d_PUBKEY(key, &der);
  if (len <= 0) return {};
  Hasher h(HashAlgorithm::Sha256);
  h.update(std::as_bytes(std::span<const unsigned char>(der, static_cast<size_t>(len))));
  OPENSSL_free(der);
  return h.finish();
}

bool verify_signature(EVP_PKEY* key, std::span<const std::uint8_t> message, std::span<const std::uint8_t> signature) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  const EVP_MD* md = EVP_PKEY_get_base_id(key) == EVP_PKEY_ED25519 ? nullptr : EVP_sha256();
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key) != 1) return false;
  return EVP_DigestVerify(ctx.get(), signature.data(), signature.size(), message.data(), message.size()) == 1;
}

bool keyring_verify(const std::vector<LogKey>& keys, std::span<const std::uint8_t> key_id,
                    std::span<const std::uint8_t> message, std::span<const std::uint8_t> signature) {
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  const auto usable = [&](const LogKey& k) { return k.valid.start <= now; };
  const auto named = [&](const LogKey& k) { return usable(k) && std::ranges::equal(k.key_id, key_id); };
  const bool any_named = std::ranges::any_of(keys, named);
  for (const auto& k : keys) {
    if ((any_named ? named(k) : usable(k)) && verify_signature(k.key.get(), message, signature)) return true;
  }
  return false;
}

std::optional<std::int64_t> parse_rfc3339(std::string_view text) {
  std::tm tm{};
  int fraction_start = 0;
  char sep = 0;
  if (std::sscanf(std::string(text).c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &sep,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &fraction_start) != 7 ||
      (sep != 'T' && sep != 't')) {
    return std::nullopt;
  }
  std::string_view rest = text.substr(static_cast<size_t>(fraction_start));
  if (!rest.empty() && rest.front() == '.') {
    size_t digits = 1;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits == 1) return std::nullopt;
    rest.remove_prefix(digits);
  }
  if (rest != "Z" && rest != "z") return std::nullopt;  // the trusted roots use UTC throughout
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<std::int64_t>(timegm(&tm));
}

}  // namespace sigstore_detail

namespace {

using Json = nlohmann::json;
using namespace sigstore_detail;

Error bad_root(const std::string& what) {
  return Error(ErrorCode::InvalidArgument, "sigstore trusted root: " + what,
               "use a trusted_root.json from the Sigstore TUF repository (e.g. `sigstore` or `cosign trusted-root`)");
}

Expected<Bytes> b64(const Json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return bad_root(where + "." + key + " missing");
  auto bytes = base64_decode(it->get<std::string>());
  if (!bytes) return bad_root(where + "." + key + " is not Base64");
  return std::move(bytes).value();
}

Expected<Validity> validity(const Json& obj, const std::string& where) {
  Validity v;
  auto it = obj.find("validFor");
  if (it == obj.end() || it->is_null()) return v;
  if (!it->is_object()) return bad_root(where + ".validFor is not an object");
  for (auto [key, field] : {std::pair{"start", &v.start}, std::pair{"end", &v.end}}) {
    if (!it->contains(key)) continue;
    const Json& t = (*it)[key];
    auto parsed = t.is_string() ? parse_rfc3339(t.get<std::string>()) : std::nullopt;
    if (!parsed) return bad_root(where + ".validFor." + key + " is not an RFC 3339 time");
    *field = *parsed;
  }
  return v;
}

Expected<std::vector<LogKey>> log_keys(const Json& doc, const char* list) {
  std::vector<LogKey> keys;
  auto it = doc.find(list);
  if (it == doc.end()) return keys;
  if (!it->is_array()) return bad_root(std::string(list) + " is not a list");
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string where = std::string(list) + "[" + std::to_string(i) + "].publicKey";
    const Json& pk = json_fields::object((*it)[i], "publicKey");
    KHUB_TRY(auto der, b64(pk, "rawBytes", where));
    KHUB_TRY(auto valid, validity(pk, where));
    PkeyRef key = public_key_from_der(der);
    if (!key) return bad_root(where + ".rawBytes is not a DER public key");
    keys.push_back({key_id_of(key.get()), std::move(key), valid});
  }
  return keys;
}

// Certificate authorities (Fulcio, timestamp): each a chain, leaf-most first, and its validity.
Expected<std::vector<SigstoreTrustRoot::Impl::Authority>> authorities(const Json& doc, const char* list) {
  std::vector<SigstoreTrustRoot::Impl::Authority> out;
  const Json& cas = json_fields::array(doc, list);
  for (size_t i = 0; i < cas.size(); ++i) {
    const std::string where = std::string(list) + "[" + std::to_string(i) + "]";
    const Json& certs = json_fields::array(json_fields::object(cas[i], "certChain"), "certificates");
    SigstoreTrustRoot::Impl::Authority ca;
    KHUB_TRY(ca.valid, validity(cas[i], where));
    for (size_t j = 0; j < certs.size(); ++j) {
      KHUB_TRY(auto der, b64(certs[j], "rawBytes", where + ".certChain.certificates[" + std::to_string(j) + "]"));
      CertRef cert = certificate_from_der(der);
      if (!cert) return bad_root(where + ".certChain holds a certificate that is not DER X.509");
      ca.chain.push_back(std::move(cert));
    }
    out.push_back(std::move(ca));
  }
  return out;
}

}  // namespace

Expected<SigstoreTrustRoot> SigstoreTrustRoot::parse(std::string_view text) {
  Json doc = json_fields::parse_untrusted(text);
  if (!doc.is_object()) return bad_root("not a JSON object");
  const std::string media = json_fields::text(doc, "mediaType");
  if (media.rfind("application/vnd.dev.sigstore.trustedroot", 0) != 0) {
    return bad_root("mediaType '" + media + "' is not a Sigstore trusted root");
  }
  auto impl = std::make_shared<Impl>();
  KHUB_TRY(impl->tlogs, log_keys(doc, "tlogs"));
  KHUB_TRY(impl->ctlogs, log_keys(doc, "ctlogs"));
  KHUB_TRY(auto fulcio, authorities(doc, "certificateAuthorities"));
  for (auto& ca : fulcio) impl->fulcio_certs.insert(impl->fulcio_certs.end(), ca.chain.begin(), ca.chain.end());
  KHUB_TRY(impl->tsas, authorities(doc, "timestampAuthorities"));
  if (impl->tlogs.empty()) return bad_root("no transparency log (tlogs) keys");
  if (impl->ctlogs.empty()) return bad_root("no CT log (ctlogs) keys");
  if (impl->fulcio_certs.empty()) return bad_root("no Fulcio certificate authorities");
  return SigstoreTrustRoot(std::move(impl));
}

Expected<SigstoreTrustRoot> SigstoreTrustRoot::load(const std::filesystem::path& file) {
  auto text = read_file(file);
  if (!text) return Error(ErrorCode::InvalidArgument, "sigstore trusted root " + file.string() + ": cannot be read");
  auto root = parse(*text);
  if (!root) {
    Error e = root.error();
    e.message = file.string() + ": " + e.message;
    return e;
  }
  return root;
}

const SigstoreTrustRoot& SigstoreTrustRoot::production() {
  static const SigstoreTrustRoot root = [] {
    static constexpr std::string_view kText =
#include "sigstore_trusted_root.inc"
        ;
    auto parsed = parse(kText);
    if (!parsed) std::abort();  // a build defect: the shipped file is checked by the tests
    return std::move(parsed).value();
  }();
  return root;
}

const std::vector<GitHubWorkflowIdentity>& kernels_community_identities() {
  static const std::vector<GitHubWorkflowIdentity> identities = {{
      "huggingface/kernels-community",
      {
          "https://github.com/huggingface/kernels-community/.github/workflows/build.yaml@refs/heads/main",
          "https://github.com/huggingface/kernels-community/.github/workflows/build-mac.yaml@refs/heads/main",
          "https://github.com/huggingface/kernels-community/.github/workflows/build-windows.yaml@refs/heads/main",
          // Signed the builds of about torch 2.10–2.12 after the fact (kernels keeps it for those).
          "https://github.com/huggingface/kernels-community/.github/workflows/sign-old-builds.yaml@refs/heads/main",
      },
  }};
  return identities;
}

}  // namespace khub::signing
