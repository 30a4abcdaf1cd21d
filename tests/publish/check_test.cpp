#include "khub/publish/check.h"

#include <algorithm>

#include "build_fixture.h"
#include "khub/publish/hash_build.h"

namespace khub::publish {
namespace {

using Check = khub::testing::BuildFixture;
using khub::testing::minimal_metadata;

const char* kArch = "torch212-cxx11-cu130-x86_64-linux";

std::vector<std::string> messages(const CheckReport& r, const std::string& check) {
  std::vector<std::string> out;
  for (const auto& f : r.findings) {
    if (f.check == check) out.push_back(f.file + ": " + f.message);
  }
  return out;
}

CheckReport check_dir(const std::filesystem::path& dir) {
  auto tree = discover_build(dir);
  EXPECT_TRUE(tree) << tree.error().message;
  auto report = check_build(*tree);
  EXPECT_TRUE(report);
  return *report;
}

TEST_F(Check, CleanBuildPasses) {
  add_variant(kArch);
  copy_in(KHUB_FIXTURE_NS_GOOD, std::string(kArch) + "/_relu_cuda_abc1234.abi3.so");
  add_variant("torch-cuda");
  ASSERT_TRUE(write_digests(*discover_build(build())));
  auto r = check_dir(build());
  EXPECT_TRUE(r.ok()) << (r.findings.empty() ? "" : r.findings[0].message);
  EXPECT_EQ(r.files_checked, std::vector<std::string>{std::string(kArch) + "/_relu_cuda_abc1234.abi3.so"});
  EXPECT_TRUE(require_clean(r));
}

// A name with a line break or a terminal escape is refused by check (so push stops before a repo is
// created); the report shows it without its control bytes.
TEST_F(Check, FileNamesWithControlCharactersAreRefused) {
  add_variant("torch-cuda");
  write("torch-cuda/layers/evil\nname.py", "# x\n");
  write("torch-cuda/esc\x1b[2J.py", "# x\n");
  ASSERT_TRUE(write_digests(*discover_build(build())));
  auto r = check_dir(build());
  EXPECT_FALSE(r.ok());
  const auto names = messages(r, "name");
  ASSERT_EQ(names.size(), 2u) << ::testing::PrintToString(names);
  for (const auto& m : names)
    for (unsigned char c : m) EXPECT_FALSE(c < 0x20 || c == 0x7f) << m;
}

TEST_F(Check, ReportsEveryProblem) {
  add_variant(kArch);
  copy_in(KHUB_FIXTURE_NS_BAD, std::string(kArch) + "/_relu_cuda_abc1234.abi3.so");
  copy_in(KHUB_FIXTURE_ABI_DIRTY, std::string(kArch) + "/helper.so");
  add_variant("torch-cuda", minimal_metadata("_relu_cuda_abc1234", 2));
  add_variant("torch210-cxx11-foo-x86_64-linux");
  add_variant("torch-cpu", R"({"name":"relu"})");
  ASSERT_TRUE(write_digests(*discover_build(build() / kArch)));
  write(std::string(kArch) + "/late.py", "added after hashing");

  auto r = check_dir(kernel());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(messages(r, "variant-name"),
            std::vector<std::string>{"torch210-cxx11-foo-x86_64-linux: Unknown backend variant string: 'foo'"});
  auto meta = messages(r, "metadata");
  ASSERT_EQ(meta.size(), 1u);
  EXPECT_TRUE(meta[0].starts_with("torch-cpu/metadata.json: Cannot parse metadata from")) << meta[0];
  EXPECT_EQ(messages(r, "version").size(), 1u);
  EXPECT_TRUE(messages(r, "version")[0].find("Found multiple versions in build variants: 1 (") != std::string::npos);
  auto digest = messages(r, "digest");
  EXPECT_NE(std::find(digest.begin(), digest.end(), std::string(kArch) + ": Unknown file: late.py"), digest.end());
  EXPECT_NE(std::find(digest.begin(), digest.end(),
                      "torch-cuda/metadata.json: metadata.json has no digest; run `khub hash` first"),
            digest.end());
  auto ns = messages(r, "namespace");
  const std::string so = std::string(kArch) + "/_relu_cuda_abc1234.abi3.so";
  EXPECT_NE(std::find(ns.begin(), ns.end(),
                      so + ": registers op namespace `_other_cuda_0000000`, expected `_relu_cuda_abc1234` (metadata id)"),
            ns.end());
  EXPECT_NE(std::find(ns.begin(), ns.end(),
                      std::string(kArch) + "/helper.so: native module stem does not match metadata id `_relu_cuda_abc1234`"),
            ns.end());
  auto ml = messages(r, "manylinux");
  EXPECT_NE(std::find(ml.begin(), ml.end(),
                      std::string(kArch) + "/helper.so: pthread_create@GLIBC_2.34 is not allowed by manylinux_2_28"),
            ml.end());
  EXPECT_FALSE(messages(r, "abi3").empty());
  EXPECT_FALSE(messages(r, "libraries").empty());
  auto st = require_clean(r, "/k");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, ErrorCode::InvalidMetadata);
  // The first eight findings, then how many more `khub check` would show.
  ASSERT_GT(r.error_count(), 8u);
  ASSERT_EQ(st.error().notes.size(), 9u);
  EXPECT_EQ(st.error().notes.back(), "… and " + std::to_string(r.error_count() - 8) + " more");
  EXPECT_NE(st.error().hint.find("`khub check /k`"), std::string::npos) << st.error().hint;
  EXPECT_NE(st.error().hint.find("run `khub hash /k` after the last change"), std::string::npos) << st.error().hint;
}

// A variant's name decides which hosts take it; its metadata.json says what was built. A mismatch,
// or a noarch name no host asks for, would publish a build no one can load (or the wrong one).
TEST_F(Check, VariantNameAndMetadataBackendAgree) {
  const std::string cpu = R"({"name":"relu","id":"_relu_cpu_abc1234","version":1,"license":"Apache-2.0",)"
                          R"("python-depends":[],"backend":{"type":"cpu"}})";
  add_variant("torch212-cxx11-cu130-x86_64-linux", cpu);
  copy_in(KHUB_FIXTURE_NS_GOOD, "torch212-cxx11-cu130-x86_64-linux/_relu_cpu_abc1234.abi3.so");
  add_variant("torch-cuda", cpu);
  add_variant("torch-bogus", cpu);
  add_variant("torch-universal", cpu);
  add_variant("torch-cpu", cpu);
  ASSERT_TRUE(write_digests(*discover_build(build())));
  EXPECT_EQ(messages(check_dir(build()), "backend"),
            (std::vector<std::string>{
                "torch-bogus: 'bogus' is not a backend: no host will choose this variant (torch-cpu for metadata.json's backend)",
                "torch-cuda: the name says backend cuda but metadata.json says cpu",
                "torch212-cxx11-cu130-x86_64-linux: the name says backend cuda but metadata.json says cpu"}));
}

TEST_F(Check, PythonDependsAllowList) {
  add_variant("torch-cuda", R"({"name":"my-kernel","id":"x","version":1,"license":"MIT",)"
                            R"("python-depends":["einops","nvidia-cutlass-dsl","torch"],"backend":{"type":"cuda"}})");
  add_variant("torch-cpu", R"({"name":"my-kernel","id":"x","version":1,"license":"MIT",)"
                           R"("python-depends":["nvidia-cutlass-dsl"],"backend":{"type":"cpu"}})");
  ASSERT_TRUE(write_digests(*discover_build(build())));
  auto r = check_dir(build());
  EXPECT_EQ(messages(r, "python-depends"),
            (std::vector<std::string>{
                "torch-cpu/metadata.json: Kernel module `my_kernel` uses unsupported kernel dependency: nvidia-cutlass-dsl",
                "torch-cuda/metadata.json: Kernel module `my_kernel` uses unsupported kernel dependency: torch"}));
}

TEST_F(Check, StableAbiVariantsUseOnlyStableSymbols) {
  const std::string v = "torch-stable-abi211-cu128-x86_64-linux";
  add_variant(v);
  copy_in(KHUB_FIXTURE_NS_GOOD, v + "/_relu_cuda_abc1234.abi3.so");
  copy_in(KHUB_FIXTURE_STABLE_ABI, v + "/lib/helper.so");
  copy_in(KHUB_FIXTURE_STABLE_ABI, std::string(kArch) + "/lib/helper.so");  // not checked: not stable ABI
  add_variant(kArch);
  copy_in(KHUB_FIXTURE_NS_GOOD, std::string(kArch) + "/_relu_cuda_abc1234.abi3.so");
  ASSERT_TRUE(write_digests(*discover_build(build())));
  auto r = check_dir(build());
  // The fixture also calls torch_library_def_with_tags, added in 2.12: past this variant's target 2.11.
  auto found = messages(r, "torch-stable-abi");
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, (std::vector<std::string>{
                       v + "/lib/helper.so: uses c10::detail::torchCheckFail(char const*, char const*, "
                           "unsigned int, char const*), which is not part of the Torch stable ABI",
                       v + "/lib/helper.so: uses torch_library_def_with_tags, added to torch's C shim in 2.12, "
                           "after the stable-ABI target 2.11"}));
}

TEST_F(Check, StrippedModuleNamespaceFromRodata) {
  add_variant(kArch);
  copy_in(KHUB_FIXTURE_NS_GOOD_STRIPPED, std::string(kArch) + "/_relu_cuda_abc1234.abi3.so");
  ASSERT_TRUE(write_digests(*discover_build(build())));
  EXPECT_TRUE(messages(check_dir(build()), "namespace").empty());
  // Same module, another id: the literal is not there, and PyInit names the other module.
  write(std::string(kArch) + "/metadata.json", minimal_metadata("_relu_cuda_fffffff"));
  std::filesystem::rename(build() / kArch / "_relu_cuda_abc1234.abi3.so", build() / kArch / "_relu_cuda_fffffff.abi3.so");
  ASSERT_TRUE(write_digests(*discover_build(build())));
  const std::string so = std::string(kArch) + "/_relu_cuda_fffffff.abi3.so";
  EXPECT_EQ(messages(check_dir(build()), "namespace"),
            (std::vector<std::string>{so + ": exports PyInit__relu_cuda_abc1234, expected PyInit__relu_cuda_fffffff",
                                      so + ": no TORCH_LIBRARY registration for namespace `_relu_cuda_fffffff` found"}));
}

TEST_F(Check, MissingNativeModuleAndInit) {
  write(std::string(kArch) + "/metadata.json", minimal_metadata());
  ASSERT_TRUE(write_digests(*discover_build(build())));
  auto r = check_dir(build());
  auto layout = messages(r, "layout");
  ASSERT_EQ(layout.size(), 2u);
  EXPECT_EQ(layout[0], std::string(kArch) + ": missing __init__.py");
  EXPECT_EQ(layout[1], std::string(kArch) + ": native module _relu_cuda_abc1234.abi3.so not found (metadata id `_relu_cuda_abc1234`)");
}

TEST_F(Check, AbiOnlyFailureIsAbiViolation) {
  add_variant(kArch);
  copy_in(KHUB_FIXTURE_NS_GOOD, std::string(kArch) + "/_relu_cuda_abc1234.abi3.so");
  copy_in(KHUB_FIXTURE_ABI_DIRTY, std::string(kArch) + "/lib/_relu_cuda_abc1234_helper.so.1");
  ASSERT_TRUE(write_digests(*discover_build(build())));
  auto r = check_dir(build());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(require_clean(r).error().code, ErrorCode::AbiViolation);
  CheckOptions no_abi;
  no_abi.abi = false;
  auto quiet = check_build(*discover_build(build()), no_abi);
  ASSERT_TRUE(quiet);
  EXPECT_TRUE(quiet->ok());
}

}  // namespace
}  // namespace khub::publish
