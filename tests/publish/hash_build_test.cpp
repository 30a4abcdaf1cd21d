#include "khub/publish/hash_build.h"

#include "build_fixture.h"
#include "khub/protocol/digest.h"

namespace khub::publish {
namespace {

using HashBuild = khub::testing::BuildFixture;
using khub::testing::slurp;

TEST_F(HashBuild, WritesDigestByteExact) {
  add_variant("torch-cuda");
  write("torch-cuda/__pycache__/x.pyc", "junk");
  auto tree = discover_build(build());
  ASSERT_TRUE(tree);
  auto hashed = write_digests(*tree);
  ASSERT_TRUE(hashed) << hashed.error().message;
  ASSERT_EQ(hashed->size(), 1u);
  EXPECT_TRUE((*hashed)[0].changed);
  EXPECT_EQ((*hashed)[0].files, 1u);
  EXPECT_EQ(slurp(build() / "torch-cuda" / "metadata.json"), R"({
  "name": "relu",
  "id": "_relu_cuda_abc1234",
  "version": 1,
  "license": "Apache-2.0",
  "python-depends": [],
  "kernel-depends": [],
  "backend": {
    "type": "cuda"
  },
  "digest": {
    "algorithm": "sha256",
    "files": {
      "__init__.py": "oJkKRxmymMxOBcRXhqsfbO0E+ZiDfCQ2pRXm7qmMTA8="
    }
  }
})");
  auto again = write_digests(*tree);
  ASSERT_TRUE(again);
  EXPECT_FALSE((*again)[0].changed);
  auto m = protocol::read_metadata(build() / "torch-cuda" / "metadata.json");
  ASSERT_TRUE(m);
  EXPECT_TRUE(protocol::verify_digest(build() / "torch-cuda", *m->digest));
}

TEST_F(HashBuild, BadMetadataWritesNothing) {
  add_variant("torch-cpu");
  add_variant("torch-cuda", R"({"name":"relu"})");
  const auto before = slurp(build() / "torch-cpu" / "metadata.json");
  auto tree = discover_build(build());
  ASSERT_TRUE(tree);
  auto hashed = write_digests(*tree);
  ASSERT_FALSE(hashed);
  EXPECT_EQ(hashed.error().code, ErrorCode::InvalidArgument);  // the build's own file: bad input, exit 2
  EXPECT_NE(hashed.error().message.find("Cannot parse metadata from"), std::string::npos);
  EXPECT_EQ(slurp(build() / "torch-cpu" / "metadata.json"), before);
}

TEST_F(HashBuild, Sha512) {
  add_variant("torch-cuda");
  auto tree = discover_build(build());
  ASSERT_TRUE(tree);
  ASSERT_TRUE(write_digests(*tree, protocol::DigestAlgorithm::Sha512));
  auto m = protocol::read_metadata(build() / "torch-cuda" / "metadata.json");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->digest->algorithm, protocol::DigestAlgorithm::Sha512);
}

}  // namespace
}  // namespace khub::publish
