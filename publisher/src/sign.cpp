#include "khub/publish/sign.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/protocol/digest.h"
#include "khub/protocol/metadata.h"
#include "khub/signing/signature.h"

namespace khub::publish {
namespace {

namespace fs = std::filesystem;
using PkeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

// Refuses every passphrase request: OpenSSL's default would prompt on the terminal, and a CI job
// with no terminal would wait for ever.
int no_passphrase(char*, int, int, void*) { return -1; }

Expected<PkeyPtr> load_private_key(const fs::path& path) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(path.c_str(), "r"), BIO_free);
  if (!bio) return Error(ErrorCode::InvalidArgument, "cannot read key " + path.string() + ": " + std::strerror(errno));
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, &no_passphrase, nullptr), EVP_PKEY_free);
  if (!key)
    return Error(ErrorCode::InvalidArgument,
                 path.string() + " is not an unencrypted PEM private key (ECDSA P-256 or Ed25519)",
                 "for a passphrase-protected key: openssl pkey -in " + path.string() + " -out plain.pem");
  const int id = EVP_PKEY_get_base_id(key.get());
  if (id == EVP_PKEY_ED25519) return key;
  if (id == EVP_PKEY_EC) {
    char group[64] = {};
    size_t len = 0;
    if (EVP_PKEY_get_group_name(key.get(), group, sizeof group, &len) == 1 && std::string(group) == "prime256v1") {
      return key;
    }
    return Error(ErrorCode::InvalidArgument, path.string() + ": EC key on curve `" + std::string(group) +
                                                 "`: only P-256 is supported", "use an ECDSA P-256 or Ed25519 key");
  }
  // A wrong key is bad input (exit 2), like a file that is no key at all.
  return Error(ErrorCode::InvalidArgument, path.string() + ": key type is not supported",
               "use an ECDSA P-256 or Ed25519 key");
}

Expected<std::string> public_pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key) != 1) return Error(ErrorCode::Io, "cannot encode the public key");
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

Expected<std::vector<std::uint8_t>> sign_bytes(EVP_PKEY* key, std::string_view message) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  const EVP_MD* md = EVP_PKEY_get_base_id(key) == EVP_PKEY_ED25519 ? nullptr : EVP_sha256();
  size_t len = 0;
  const auto* msg = reinterpret_cast<const unsigned char*>(message.data());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, md, nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, msg, message.size()) != 1) {
    return Error(ErrorCode::Signature, "signing failed");
  }
  std::vector<std::uint8_t> sig(len);
  if (EVP_DigestSign(ctx.get(), sig.data(), &len, msg, message.size()) != 1) {
    return Error(ErrorCode::Signature, "signing failed");
  }
  sig.resize(len);
  return sig;
}

}  // namespace

Expected<std::string> public_key_pem_of(const fs::path& private_key_pem) {
  KHUB_TRY(auto key, load_private_key(private_key_pem));
  return public_pem(key.get());
}

Expected<SignResult> sign_build(const BuildTree& tree, const fs::path& private_key_pem) {
  KHUB_TRY(auto key, load_private_key(private_key_pem));
  KHUB_TRY(auto pub, public_pem(key.get()));
  SignResult result;
  KHUB_TRY(result.key_hint, signing::public_key_hint(pub));
  std::vector<std::string> texts;
  for (const auto& v : tree.variants) {
    KHUB_TRY(auto m, read_variant_metadata(v));
    if (!m.digest) {
      return Error(ErrorCode::InvalidMetadata, v.name + "/metadata.json has no digest; run `khub hash` first");
    }
    // A signature vouches for the digest: a digest the files no longer match would be signed wrong.
    KHUB_TRY(auto actual, protocol::compute_digest(v.path, m.digest->algorithm));
    if (auto violations = protocol::compare_digests(*m.digest, actual); !violations.empty()) {
      return Error(ErrorCode::InvalidMetadata,
                   v.name + "/metadata.json's digest does not match the files: " + violations.front().describe(),
                   "run `khub hash` after the last change, then sign");
    }
    std::ifstream in(v.path / "metadata.json", std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    texts.push_back(s.str());
  }
  KHUB_CHECK(require_writable_variants(tree));
  for (std::size_t i = 0; i < tree.variants.size(); ++i) {
    signing::SignatureBundle bundle;
    bundle.key_hint = result.key_hint;
    Hasher h(HashAlgorithm::Sha256);
    h.update(texts[i]);
    bundle.message_digest = h.finish();
    KHUB_TRY(bundle.signature, sign_bytes(key.get(), texts[i]));
    KHUB_CHECK(write_file_atomic(tree.variants[i].path / "metadata.json.sigstore",
                                signing::serialize_signature_bundle(bundle)));
    result.variants.push_back(tree.variants[i].name);
  }
  return result;
}

}  // namespace khub::publish
