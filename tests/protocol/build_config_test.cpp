#include "khub/protocol/build_config.h"

#include <gtest/gtest.h>

namespace khub::protocol {
namespace {

constexpr std::string_view kRmsnorm = R"(
[general]
name = "rmsnorm"
version = 1
edition = 5
license = "Apache-2.0"
backends = ["cuda"]
upstream = "https://github.com/example/rmsnorm"
python-depends = ["einops"]
kernel-depends = [{ repo-id = "kernels-community/relu", version = 1 }]

[general.hub]
repo-id = "khub-test/rmsnorm"

[torch]
src = ["torch-ext/torch_binding.cpp", "torch-ext/torch_binding.h"]

[kernel.rmsnorm]
backend = "cuda"
depends = ["torch"]
src = ["rmsnorm_cuda/rmsnorm.cu"]
cuda-capabilities = ["9.0a"]

[kernel.other]
backend = "cuda"
depends = []
src = ["x.cu"]
cuda-capabilities = ["8.0", "10.0"]
)";

TEST(BuildConfig, ParsesEdition5) {
  auto c = parse_build_config(kRmsnorm);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->name, "rmsnorm");
  EXPECT_EQ(c->version, 1u);
  EXPECT_EQ(c->edition, 5);
  EXPECT_EQ(c->license, "Apache-2.0");
  EXPECT_EQ(c->backends, (std::vector<std::string>{"cuda"}));
  EXPECT_EQ(c->hub_repo_id, "khub-test/rmsnorm");
  EXPECT_FALSE(c->hub_branch);
  EXPECT_EQ(c->framework, FrameworkSection::Torch);
  ASSERT_EQ(c->kernel_depends.size(), 1u);
  EXPECT_EQ(c->kernel_depends[0].version, 1u);
  EXPECT_EQ(c->kernels.size(), 2u);
  EXPECT_EQ(c->cuda_archs(), (std::vector<std::string>{"10.0", "8.0", "9.0a"}));  // lexicographic
  EXPECT_EQ(c->pyext, (std::vector<std::string>{"py", "pyi"}));
  EXPECT_TRUE(c->warnings.empty());
}

TEST(BuildConfig, Errors) {
  auto edition = parse_build_config("[general]\nname=\"ab\"\nversion=1\nedition=6\nlicense=\"x\"\nbackends=[]\n");
  ASSERT_FALSE(edition);
  EXPECT_EQ(edition.error().message, "unsupported build edition 6; upgrade kernel-builder");
  auto unknown = parse_build_config(std::string(kRmsnorm) + "\n[torch-noarch]\n");
  ASSERT_FALSE(unknown);
  std::string with_unknown(kRmsnorm);
  with_unknown.replace(with_unknown.find("[general.hub]"), 13, "colour = 1\n[general.hub]");
  auto u = parse_build_config(with_unknown);
  ASSERT_FALSE(u);
  EXPECT_EQ(u.error().message, "unknown field `colour` in [general]");
  auto syntax = parse_build_config("[general\n");
  ASSERT_FALSE(syntax);
  EXPECT_TRUE(syntax.error().message.starts_with("cannot parse build.toml: ")) << syntax.error().message;
  auto name = parse_build_config("[general]\nname=\"My_K\"\nversion=1\nedition=5\nlicense=\"x\"\nbackends=[]\n[torch]\n");
  ASSERT_FALSE(name);
  EXPECT_EQ(name.error().message, "invalid kernel name `My_K` in [general]");
}

// Found by fuzz/build_toml.cpp: toml++'s value<int64_t>() of a float beyond int64 is an unchecked
// cast (UBSan: "outside the range of representable values"); floats are not integers here.
TEST(BuildConfig, FloatWhereAnIntegerBelongsIsRefused) {
  auto huge = parse_build_config("[general]\nnamsion = 3\nedition = 3676e62\n");
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().message, "unsupported build edition ?; upgrade kernel-builder");
  auto five = parse_build_config("[general]\nname=\"ab\"\nversion=1\nedition=5.0\nlicense=\"x\"\nbackends=[]\n");
  ASSERT_FALSE(five);
  EXPECT_EQ(five.error().message, "unsupported build edition ?; upgrade kernel-builder");
  auto version = parse_build_config("[general]\nname=\"ab\"\nversion=1e300\nedition=5\nlicense=\"x\"\nbackends=[]\n");
  ASSERT_FALSE(version);
  EXPECT_EQ(version.error().message, "`version` in [general] must be an integer >= 0");
}

TEST(BuildConfig, Edition4UpgradesWithWarning) {
  auto c = parse_build_config(
      "[general]\nname=\"relu\"\nversion=2\nlicense=\"MIT\"\nbackends=[\"cpu\"]\n[torch-noarch]\n"
      "cuda-capabilities=[\"9.0\"]\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->edition, 4);
  EXPECT_EQ(c->framework, FrameworkSection::TorchNoarch);
  EXPECT_EQ(c->noarch_cuda_capabilities, (std::vector<std::string>{"9.0"}));
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_TRUE(c->warnings[0].starts_with("build.toml uses the legacy v4 format"));
}


// kernel-depends: [general] for every variant, [general.<backend>] added for that backend's variants
// (general first); both selector forms; a bad entry names its table.
TEST(BuildConfig, KernelDependsPerBackend) {
  const std::string base =
      "[general]\nname=\"app\"\nversion=1\nedition=5\nlicense=\"MIT\"\nbackends=[\"cpu\",\"cuda\"]\n"
      "kernel-depends=[{ repo-id = \"org/a\", version = 2 }]\n";
  auto c = parse_build_config(base + "[general.cuda]\nkernel-depends=[{ repo-id = \"org/b\", revision = \"main\" }]\n"
                                     "[general.xpu]\nkernel-depends=[]\n[torch]\nsrc=[]\n");
  ASSERT_TRUE(c) << c.error().message;
  const KernelDependency a{"org/a", 2, std::nullopt}, b{"org/b", std::nullopt, "main"};
  EXPECT_EQ(c->kernel_depends_for("cpu"), std::vector<KernelDependency>{a});
  EXPECT_EQ(c->kernel_depends_for("cuda"), (std::vector<KernelDependency>{a, b}));
  EXPECT_EQ(c->kernel_depends_for("xpu"), std::vector<KernelDependency>{a});
  auto both = parse_build_config(base + "[general.cuda]\nkernel-depends=[{ repo-id = \"org/b\", version = 1, "
                                        "revision = \"x\" }]\n[torch]\nsrc=[]\n");
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().message, "kernel dependency `org/b` needs exactly one of `version` or `revision`");
  auto not_array = parse_build_config(base + "[general.neuron]\nkernel-depends=1\n[torch]\nsrc=[]\n");
  ASSERT_FALSE(not_array);
  EXPECT_EQ(not_array.error().message, "`kernel-depends` in [general.neuron] must be an array");
}

}  // namespace
}  // namespace khub::protocol
