#include "khub/publish/sign.h"

#include "build_fixture.h"
#include "key_fixture.h"
#include "khub/protocol/digest.h"
#include "khub/signing/signature.h"
#include "khub/publish/hash_build.h"

namespace khub::publish {
namespace {

using khub::testing::slurp;
using Sign = khub::testing::BuildFixture;
using signing::SignatureOutcome;

TEST_F(Sign, SignsAndVerifiesWithBothKeyTypes) {
  add_variant("torch-cuda");
  add_variant("torch-cpu");
  auto tree = discover_build(build());
  ASSERT_TRUE(tree);
  ASSERT_TRUE(write_digests(*tree));
  for (const std::string kind : {"p256", "ed25519"}) {
    auto key = root_ / (kind + ".pem");
    ASSERT_TRUE(khub::testing::write_private_key(kind, key));
    const auto metadata_before = slurp(build() / "torch-cuda" / "metadata.json");
    auto signed_ = sign_build(*tree, key);
    ASSERT_TRUE(signed_) << signed_.error().message;
    EXPECT_EQ(signed_->variants, (std::vector<std::string>{"torch-cpu", "torch-cuda"}));
    EXPECT_EQ(slurp(build() / "torch-cuda" / "metadata.json"), metadata_before);
    auto pub = public_key_pem_of(key);
    ASSERT_TRUE(pub);
    auto bundle = signing::parse_signature_bundle(slurp(build() / "torch-cuda" / "metadata.json.sigstore"));
    ASSERT_TRUE(bundle) << bundle.error().message;
    EXPECT_EQ(bundle->media_type, "application/vnd.dev.sigstore.bundle.v0.3+json");
    EXPECT_EQ(bundle->key_hint, signed_->key_hint);
    EXPECT_EQ(signing::public_key_hint(*pub).value(), signed_->key_hint);
    auto ok = signing::verify_variant_signature(build() / "torch-cuda", {*pub});
    EXPECT_EQ(ok.outcome, SignatureOutcome::Success) << kind << ": " << ok.detail;
    // The digest excludes the bundle, so signing keeps the digest valid.
    auto m = protocol::read_metadata(build() / "torch-cuda" / "metadata.json");
    EXPECT_TRUE(protocol::verify_digest(build() / "torch-cuda", *m->digest));
  }
}

TEST_F(Sign, VerificationOutcomesInOrder) {
  add_variant("torch-cuda");
  auto tree = discover_build(build());
  ASSERT_TRUE(write_digests(*tree));
  auto dir = build() / "torch-cuda";
  ASSERT_TRUE(khub::testing::write_private_key("p256", root_ / "k.pem"));
  ASSERT_TRUE(khub::testing::write_private_key("ed25519", root_ / "other.pem"));
  const auto pub = public_key_pem_of(root_ / "k.pem").value();
  const auto other = public_key_pem_of(root_ / "other.pem").value();

  EXPECT_EQ(signing::verify_variant_signature(dir, {pub}).outcome, SignatureOutcome::SignatureBundleMissing);
  ASSERT_TRUE(sign_build(*tree, root_ / "k.pem"));
  EXPECT_EQ(signing::verify_variant_signature(dir, {other, pub}).outcome, SignatureOutcome::Success);
  EXPECT_EQ(signing::verify_variant_signature(dir, {other}).outcome, SignatureOutcome::SignatureVerificationFailure);
  EXPECT_EQ(signing::verify_variant_signature(dir, std::vector<std::string>{}).outcome, SignatureOutcome::SignatureVerificationFailure);

  const auto bundle = slurp(dir / "metadata.json.sigstore");
  const auto metadata = slurp(dir / "metadata.json");
  std::ofstream(dir / "metadata.json", std::ios::binary) << metadata << " ";
  auto tampered = signing::verify_variant_signature(dir, {pub});
  EXPECT_EQ(tampered.outcome, SignatureOutcome::SignatureVerificationFailure);
  EXPECT_EQ(tampered.detail, "messageDigest does not match metadata.json");
  std::filesystem::remove(dir / "metadata.json");
  EXPECT_EQ(signing::verify_variant_signature(dir, {pub}).outcome, SignatureOutcome::MetadataMissing);
  std::ofstream(dir / "metadata.json", std::ios::binary) << metadata;
  std::ofstream(dir / "metadata.json.sigstore") << "{\"mediaType\": 3}";
  EXPECT_EQ(signing::verify_variant_signature(dir, {pub}).outcome, SignatureOutcome::SignatureBundleInvalid);

  std::vector<std::string> warnings;
  EXPECT_TRUE(signing::enforce_signature_policy(dir, signing::SignaturePolicy::Ignore, signing::SignatureTrust{{pub}}, &warnings));
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(signing::enforce_signature_policy(dir, signing::SignaturePolicy::Warn, signing::SignatureTrust{{pub}}, &warnings));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(warnings[0].starts_with("torch-cuda: SignatureBundleInvalid: ")) << warnings[0];
  auto required = signing::enforce_signature_policy(dir, signing::SignaturePolicy::Require, signing::SignatureTrust{{pub}});
  ASSERT_FALSE(required);
  EXPECT_EQ(required.error().code, ErrorCode::Signature);
  std::ofstream(dir / "metadata.json.sigstore") << bundle;
  EXPECT_TRUE(signing::enforce_signature_policy(dir, signing::SignaturePolicy::Require, signing::SignatureTrust{{pub}}));
}

TEST_F(Sign, RefusesUnsupportedKeysAndUnhashedMetadata) {
  add_variant("torch-cuda");
  auto tree = discover_build(build());
  ASSERT_TRUE(khub::testing::write_private_key("p256", root_ / "k.pem"));
  auto unhashed = sign_build(*tree, root_ / "k.pem");
  ASSERT_FALSE(unhashed);
  EXPECT_EQ(unhashed.error().code, ErrorCode::InvalidMetadata);
  EXPECT_FALSE(std::filesystem::exists(build() / "torch-cuda" / "metadata.json.sigstore"));
  ASSERT_TRUE(write_digests(*tree));
  for (const std::string kind : {"rsa", "p384"}) {
    ASSERT_TRUE(khub::testing::write_private_key(kind, root_ / (kind + ".pem")));
    auto r = sign_build(*tree, root_ / (kind + ".pem"));
    ASSERT_FALSE(r) << kind;
    EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);  // bad input, exit 2
    EXPECT_EQ(r.error().hint, "use an ECDSA P-256 or Ed25519 key");
  }
  std::ofstream(root_ / "junk.pem") << "not a key";
  EXPECT_EQ(sign_build(*tree, root_ / "junk.pem").error().code, ErrorCode::InvalidArgument);
  // A passphrase-protected key is refused at once: no prompt (a CI job has no terminal to answer).
  ASSERT_TRUE(khub::testing::write_private_key("p256", root_ / "enc.pem", "secret passphrase"));
  auto encrypted = sign_build(*tree, root_ / "enc.pem");
  ASSERT_FALSE(encrypted);
  EXPECT_EQ(encrypted.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(encrypted.error().hint.find("openssl pkey"), std::string::npos);
}

// A file changed after `khub hash`: the digest no longer describes the files, so signing it would
// vouch for bytes that are not there. Nothing is written.
TEST_F(Sign, RefusesADigestTheFilesNoLongerMatch) {
  add_variant("torch-cuda");
  add_variant("torch-cpu");
  auto tree = discover_build(build());
  ASSERT_TRUE(write_digests(*tree));
  std::ofstream(build() / "torch-cpu" / "__init__.py", std::ios::app) << "# edited after hashing\n";
  ASSERT_TRUE(khub::testing::write_private_key("p256", root_ / "k.pem"));
  auto r = sign_build(*tree, root_ / "k.pem");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::InvalidMetadata);
  EXPECT_NE(r.error().message.find("torch-cpu/metadata.json's digest does not match the files: File hash mismatch "
                                   "for __init__.py"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().hint.find("khub hash"), std::string::npos);
  for (const char* v : {"torch-cuda", "torch-cpu"})
    EXPECT_FALSE(std::filesystem::exists(build() / v / "metadata.json.sigstore")) << v;
}

}  // namespace
}  // namespace khub::publish
