#pragma once
// Fresh private keys as PEM files for the signing tests (OpenSSL key generation).
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <filesystem>
#include <string>

namespace khub::testing {

/// kind: "p256", "ed25519", "rsa", "p384". A passphrase writes it AES-256 encrypted. Returns false on
/// failure.
inline bool write_private_key(const std::string& kind, const std::filesystem::path& out,
                              const std::string& passphrase = {}) {
  EVP_PKEY* key = nullptr;
  if (kind == "p256") key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (kind == "p384") key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384");
  if (kind == "ed25519") key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (kind == "rsa") key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(2048));
  if (!key) return false;
  BIO* bio = BIO_new_file(out.c_str(), "w");
  const EVP_CIPHER* cipher = passphrase.empty() ? nullptr : EVP_aes_256_cbc();
  auto* pass = reinterpret_cast<unsigned char*>(const_cast<char*>(passphrase.data()));
  bool ok = bio && PEM_write_bio_PrivateKey(bio, key, cipher, passphrase.empty() ? nullptr : pass,
                                            static_cast<int>(passphrase.size()), nullptr, nullptr) == 1;
  BIO_free(bio);
  EVP_PKEY_free(key);
  return ok;
}

}  // namespace khub::testing
