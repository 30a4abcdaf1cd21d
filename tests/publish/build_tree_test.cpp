#include "khub/publish/build_tree.h"

#include "build_fixture.h"

namespace khub::publish {
namespace {

using Discover = khub::testing::BuildFixture;

TEST_F(Discover, FindsBuildUnderKernelDir) {
  add_variant("torch212-cxx11-cu130-x86_64-linux");
  add_variant("torch-cuda");
  write("not-a-variant/readme.txt", "x");
  for (const auto& dir : {kernel(), build()}) {
    auto tree = discover_build(dir);
    ASSERT_TRUE(tree) << tree.error().message;
    // The folder given is the kernel dir, as kernel-builder takes it; build/'s parent is kept aside.
    EXPECT_EQ(tree->kernel_dir, std::filesystem::canonical(dir));
    EXPECT_EQ(tree->parent_kernel_dir, dir == build() ? std::filesystem::canonical(kernel()) : "");
    EXPECT_EQ(tree->variants_dir, std::filesystem::canonical(build()));
    ASSERT_EQ(tree->variants.size(), 2u);
    EXPECT_EQ(tree->variants[0].name, "torch-cuda");
    EXPECT_EQ(tree->variants[1].name, "torch212-cxx11-cu130-x86_64-linux");
  }
}

TEST_F(Discover, ResultWinsOverBuildAndSingleVariant) {
  add_variant("torch-cuda");
  std::filesystem::create_directories(kernel() / "result" / "torch-cpu");
  std::ofstream(kernel() / "result" / "torch-cpu" / "metadata.json") << "{}";
  auto tree = discover_build(kernel());
  ASSERT_TRUE(tree);
  EXPECT_EQ(tree->variants_dir.filename(), "result");
  auto single = discover_build(build() / "torch-cuda");
  ASSERT_TRUE(single);
  ASSERT_EQ(single->variants.size(), 1u);
  EXPECT_EQ(single->variants[0].name, "torch-cuda");
  EXPECT_EQ(single->kernel_dir, std::filesystem::canonical(kernel()));
}

// A variant whose metadata.json is a dangling link or a folder stops check / hash / push instead of
// being left out of what they publish.
TEST_F(Discover, UnreadableMetadataIsAnErrorNotASkippedVariant) {
  add_variant("torch-cuda");
  std::filesystem::create_directories(build() / "torch-cpu");
  std::filesystem::create_symlink("/nonexistent/metadata.json", build() / "torch-cpu" / "metadata.json");
  auto dangling = discover_build(kernel());
  ASSERT_FALSE(dangling);
  EXPECT_EQ(dangling.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(dangling.error().message.find("torch-cpu/metadata.json is not a readable file"), std::string::npos)
      << dangling.error().message;
  std::filesystem::remove(build() / "torch-cpu" / "metadata.json");
  std::filesystem::create_directories(build() / "torch-cpu" / "metadata.json");
  EXPECT_FALSE(discover_build(kernel()));
}

TEST_F(Discover, EmptyOrMissing) {
  auto empty = discover_build(kernel());
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, ErrorCode::InvalidArgument);
  EXPECT_EQ(discover_build(root_ / "nope").error().code, ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace khub::publish
