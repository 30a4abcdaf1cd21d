// Oracle: sigstore-models (the protobuf-specs bundle models sigstore-python uses) must accept every
// bundle khub writes, and `cryptography` must verify its signature over metadata.json's bytes.
#include <gtest/gtest.h>

#include "../protocol/python_oracle.h"
#include "build_fixture.h"
#include "key_fixture.h"
#include "khub/publish/hash_build.h"
#include "khub/publish/sign.h"

namespace khub::publish {
namespace {

using SigstoreOracle = khub::testing::BuildFixture;

TEST_F(SigstoreOracle, BundlesValidateAndVerify) {
  if (!khub::testing::python_has("sigstore_models") || !khub::testing::python_has("cryptography")) {
    GTEST_SKIP() << "sigstore_models / cryptography not importable";
  }
  add_variant("torch-cuda");
  add_variant("torch212-cxx11-cu130-x86_64-linux");
  auto tree = discover_build(build());
  ASSERT_TRUE(write_digests(*tree));
  for (const std::string kind : {"p256", "ed25519"}) {
    auto key = root_ / (kind + ".pem");
    ASSERT_TRUE(khub::testing::write_private_key(kind, key));
    ASSERT_TRUE(sign_build(*tree, key));
    std::ofstream(root_ / "pub.pem") << public_key_pem_of(key).value();
    auto r = khub::testing::run_python(
        "import base64, hashlib, pathlib\n"
        "from sigstore_models.bundle.v1 import Bundle\n"
        "from cryptography.hazmat.primitives import hashes, serialization\n"
        "from cryptography.hazmat.primitives.asymmetric import ec, ed25519\n"
        "pub = serialization.load_pem_public_key(pathlib.Path(r'" + (root_ / "pub.pem").string() + "').read_bytes())\n"
        "der = pub.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)\n"
        "for v in sorted(pathlib.Path(r'" + build().string() + "').iterdir()):\n"
        "    b = Bundle.from_json((v / 'metadata.json.sigstore').read_bytes())\n"
        "    data = (v / 'metadata.json').read_bytes()\n"
        "    assert b.media_type == 'application/vnd.dev.sigstore.bundle.v0.3+json'\n"
        "    assert b.message_signature.message_digest.digest == hashlib.sha256(data).digest()\n"
        "    assert b.verification_material.public_key.hint == base64.b64encode(hashlib.sha256(der).digest()).decode()\n"
        "    sig = b.message_signature.signature\n"
        "    if isinstance(pub, ec.EllipticCurvePublicKey): pub.verify(sig, data, ec.ECDSA(hashes.SHA256()))\n"
        "    else: pub.verify(sig, data)\n"
        "    print(v.name, 'ok')\n");
    EXPECT_EQ(r.status, 0) << kind;
    EXPECT_EQ(r.output, "torch-cuda ok\ntorch212-cxx11-cu130-x86_64-linux ok\n") << kind;
  }
}

}  // namespace
}  // namespace khub::publish
