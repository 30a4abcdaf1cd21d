// End to end with torch: kernels in kernel-builder layout (TORCH_LIBRARY + PyInit referencing
// PyModule_Create2, no libpython) loaded with get_local_kernel and with get_kernel from a loopback
// Hub, ops called from C++ and checked against an fp32 reference.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "fixture_hub.h"
#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/hub/hub_client.h"
#include "khub/kernel.h"
#include "khub/protocol/lock.h"
#include "test_kernel_build.h"
#include "test_util.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;
using test::FixtureFile;
using test::host_variant;
using RmsSig = at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double);

const std::string kIdA = "_khub_test_cpu_aaaaaaa";  // scale 1, lazy binding
const std::string kIdB = "_khub_test_cpu_bbbbbbb";  // scale 2, -z now

// build/<variant>/ of test kernel A or B for this host.
std::map<std::string, FixtureFile> kernel_files(const std::string& id) {
  return test::test_kernel_files(id, id == kIdA ? "a" : "b");
}

void write_tree(const fs::path& root, const std::map<std::string, FixtureFile>& files) {
  for (const auto& [p, f] : files) ASSERT_TRUE(write_file_atomic(root / p, f.content));
}

at::Tensor reference(const at::Tensor& x, const at::Tensor& w, double eps, double scale) {
  return x * at::rsqrt(x.pow(2).mean(-1, true) + eps) * w * scale;
}

void expect_rms_norm(const Kernel& k, double scale) {
  auto op = k.op("rms_norm");
  ASSERT_TRUE(op) << op.error().describe();
  at::Tensor x = at::randn({4, 64});
  at::Tensor w = at::rand({64});
  at::Tensor y = op->typed<RmsSig>().call(x, w, 1e-6);
  EXPECT_TRUE(at::allclose(y, reference(x, w, 1e-6, scale), 1e-5, 1e-6));
  auto boxed = op->call_boxed({x, c10::IValue(), 1e-6});
  ASSERT_EQ(boxed.size(), 1u);
  EXPECT_TRUE(at::allclose(boxed[0].toTensor(), reference(x, at::ones({64}), 1e-6, scale), 1e-5, 1e-6));
}

TEST(Kernel, LocalKernelLoadsAndCalls) {
  test::TempDir dir;
  write_tree(dir.path(), kernel_files(kIdA));
  write_tree(dir.path(), {{"build/torch-cpu/metadata.json", {"{}", false}}});  // noarch: not loadable natively
  auto k = get_local_kernel(dir.path());
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->id(), kIdA);
  EXPECT_EQ(k->variant(), host_variant());
  EXPECT_TRUE(k->verified());
  EXPECT_EQ(k->ops(), std::vector<std::string>{"rms_norm"});
  expect_rms_norm(*k, 1.0);
  auto missing = k->op("nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::EntryNotFound);
  EXPECT_NE(missing.error().hint.find("rms_norm"), std::string::npos);
  // The variant dir itself works too.
  EXPECT_TRUE(get_local_kernel(dir.path() / "build" / host_variant()));
  EXPECT_EQ(get_local_kernel(dir.path() / "nothing").error().message,
            "Could not find kernel in " + (dir.path() / "nothing").string());
}

class HubKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    v1_ = hub_.commit("org/rmsnorm", "v1", kernel_files(kIdA));
    auto files = kernel_files(kIdB);
    files["build/torch29-cxx11-cu126-x86_64-linux/metadata.json"] = {"{}", false};
    v2_ = hub_.commit("org/rmsnorm", "v2", files);
    hub_.set_trusted("org", true);
    unsetenv("HF_HUB_OFFLINE");
    unsetenv("LOCAL_KERNELS");
  }
  void TearDown() override { hub::drop_shared_clients(); }  // no idle connection outlives the server
  GetKernelOptions options(int version) {
    GetKernelOptions o;
    o.version = version;
    o.endpoint = hub_.endpoint();
    o.cache_dir = cache_.path();
    return o;
  }
  test::FixtureHub hub_;
  test::TempDir cache_;
  std::string v1_, v2_;
};

TEST_F(HubKernel, TwoVersionsSideBySideThenOffline) {
  auto k1 = get_kernel("org/rmsnorm", options(1));
  ASSERT_TRUE(k1) << k1.error().describe();
  auto k2 = get_kernel("org/rmsnorm", options(2));
  ASSERT_TRUE(k2) << k2.error().describe();
  EXPECT_EQ(k1->commit(), v1_);
  EXPECT_EQ(k2->id(), kIdB);
  EXPECT_TRUE(k1->verified() && k2->verified());
  EXPECT_EQ(k2->signature(), hub::SignatureStatus::Absent);
  expect_rms_norm(*k1, 1.0);
  expect_rms_norm(*k2, 2.0);
  ASSERT_EQ(k1->warnings().size(), 1u);
  EXPECT_EQ(k1->warnings()[0], "You are using version 1 of 'org/rmsnorm', but version 2 is available.");

  hub_.clear_requests();
  setenv("HF_HUB_OFFLINE", "1", 1);
  auto offline = get_kernel("org/rmsnorm", options(2));
  unsetenv("HF_HUB_OFFLINE");
  ASSERT_TRUE(offline) << offline.error().describe();
  EXPECT_EQ(offline->commit(), v2_);
  EXPECT_TRUE(offline->verified());
  EXPECT_TRUE(hub_.requests().empty());
  expect_rms_norm(*offline, 2.0);
}

TEST_F(HubKernel, TrustHasKernelAndLocalOverride) {
  hub_.set_trusted("org", false);
  auto untrusted = get_kernel("org/rmsnorm", options(1));
  ASSERT_FALSE(untrusted);
  EXPECT_EQ(untrusted.error().code, ErrorCode::Untrusted);
  auto o = options(1);
  o.trust_remote_code = true;
  EXPECT_TRUE(get_kernel("org/rmsnorm", o));
  EXPECT_TRUE(*has_kernel("org/rmsnorm", options(2)));
  EXPECT_FALSE(*has_kernel("org/rmsnorm", options(7)));

  test::TempDir local;
  write_tree(local.path(), kernel_files(kIdA));
  setenv("LOCAL_KERNELS", ("other/kernel=" + local.path().string()).c_str(), 1);
  auto overridden = get_kernel("other/kernel", options(1));
  unsetenv("LOCAL_KERNELS");
  ASSERT_TRUE(overridden) << overridden.error().describe();
  EXPECT_EQ(overridden->id(), kIdA);
}

TEST_F(HubKernel, LockFilePinsCommitAndHash) {
  hub::ClientOptions co;
  co.endpoint = hub_.endpoint();
  hub::HubClient client(co);
  auto tree = client.list_tree(hub::RepoRef{hub::RepoType::Kernel, "org/rmsnorm"}, v1_, "", true);
  ASSERT_TRUE(tree);
  std::vector<protocol::TreeFile> files;
  for (const auto& e : *tree)
    if (!e.directory)
      files.push_back({e.path, e.oid, e.lfs_oid.empty() ? std::nullopt : std::optional<std::string>(e.lfs_oid)});
  auto variants = protocol::lock_variants(files);
  ASSERT_TRUE(variants);
  protocol::LegacyLock lock{"org/rmsnorm", v1_, *variants};
  test::TempDir dir;
  ASSERT_TRUE(write_file_atomic(dir.path() / "kernels.lock", protocol::serialize_legacy_locks({lock})));
  auto k = load_kernel(dir.path() / "kernels.lock", "org/rmsnorm", options(1));
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->commit(), v1_);
  expect_rms_norm(*k, 1.0);

  lock.variants[0].second.hash = "sha256-" + std::string(64, '0');
  ASSERT_TRUE(write_file_atomic(dir.path() / "kernels.lock", protocol::serialize_legacy_locks({lock})));
  auto bad = load_kernel(dir.path() / "kernels.lock", "org/rmsnorm", options(1));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::Integrity);
  EXPECT_EQ(load_kernel(dir.path() / "kernels.lock", "org/other", options(1)).error().message,
            "Kernel `org/other` is not locked. Please lock it with `kernels lock <project>` and then reinstall the "
            "project.");
}

TEST_F(HubKernel, RedirectFollowsKernelStatus) {
  hub_.commit("org/old", "v1", {{"kernel-status.toml", {"kind = \"redirect\"\ndestination = \"org/rmsnorm\"\nrevision = \"v2\"\n", false}}});
  auto k = get_kernel("org/old", options(1));
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->repo_id(), "org/rmsnorm");
  EXPECT_EQ(k->commit(), v2_);
  EXPECT_NE(std::find(k->warnings().begin(), k->warnings().end(), "'org/old' redirected to 'org/rmsnorm'"),
            k->warnings().end());
}

TEST_F(HubKernel, TamperedModuleIsNeverLoaded) {
  auto files = kernel_files(kIdB);
  auto& so = files["build/" + host_variant() + "/" + kIdB + ".abi3.so"];
  so.content[100] ^= 1;  // the digest in metadata.json no longer matches
  hub_.commit("org/tampered", "v1", files);
  auto k = get_kernel("org/tampered", options(1));
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::Integrity);
  EXPECT_NE(k.error().message.find(kIdB + ".abi3.so"), std::string::npos) << k.error().message;
}

// kernel-depends: get_kernel loads the dependency (module c) before the dependent (module d, whose
// op calls c's through the dispatcher and which records at load time whether c's op was already
// registered); a dependency with only a Python-only build is downloaded, verified, reported and
// not loaded; the dependent's own ops run.
TEST_F(HubKernel, DependenciesLoadFirstAndPythonOnlyOnesAreReported) {
  const std::string kIdC = "_khub_test_cpu_ccccccc", kIdD = "_khub_test_cpu_ddddddd";
  hub_.commit("org/dep", "v1", test::test_kernel_files(kIdC, "c"));
  const std::string py_meta =
      R"({"name":"einops","id":"_einops_py","version":1,"license":"MIT","python-depends":[],"backend":{"type":"cpu"}})";
  const std::string noarch = "torch-" + test::backend_type_of(host_variant());  // torch-cpu, torch-cuda
  hub_.commit("org/einops", "v1", {{"build/" + noarch + "/__init__.py", {"import einops\n", false}},
                                   {"build/" + noarch + "/metadata.json", {py_meta, false}}});
  auto app = test::test_kernel_files(kIdD, "d");
  auto& meta = app["build/" + host_variant() + "/metadata.json"].content;
  meta.replace(meta.find("\"python-depends\":[]"), 19,
               R"("python-depends":[],"kernel-depends":[{"repo-id":"org/dep","version":1},)"
               R"({"repo-id":"org/einops","revision":"v1"}])");
  hub_.commit("org/app", "v1", app);

  auto k = get_kernel("org/app", options(1));
  ASSERT_TRUE(k) << k.error().describe();
  ASSERT_EQ(k->dependencies().size(), 2u);
  EXPECT_TRUE(k->dependencies()[0].kernel.loadable);
  EXPECT_FALSE(k->dependencies()[1].kernel.loadable);
  EXPECT_TRUE(k->dependencies()[1].kernel.verified);
  EXPECT_NE(std::find(k->warnings().begin(), k->warnings().end(),
                      "kernel dependency org/einops (revision: v1) of org/app has only a Python-only build here (" +
                          noarch + "): downloaded and verified, not loaded (the Python `kernels` package loads it)"),
            k->warnings().end());
  auto first = k->op("dependency_loaded_first");
  ASSERT_TRUE(first) << first.error().describe();
  EXPECT_TRUE(first->typed<bool()>().call());
  expect_rms_norm(*k, 12.0);  // 3 x module c's scale 4, through c's op
  auto dep = k->dependency("org/dep");
  ASSERT_TRUE(dep) << dep.error().describe();
  EXPECT_EQ(dep->id(), kIdC);
  expect_rms_norm(*dep, 4.0);
  EXPECT_EQ(k->dependency("org/einops").error().code, ErrorCode::Unsupported);
  auto undeclared = k->dependency("org/other");
  ASSERT_FALSE(undeclared);
  EXPECT_EQ(undeclared.error().message,
            "Dependency 'org/other' not found in kernel dependencies. Ensure the dependency is added to "
            "`kernel-deps` in build.toml.");

  // has_kernel asks the whole tree, as kernels' has_kernel: a dependency with no build here is false.
  EXPECT_TRUE(*has_kernel("org/app", options(1)));
  hub_.commit("org/elsewhere", "v1", test::test_kernel_files(kIdC, "c", "torch29-cxx11-cu126-aarch64-linux"));
  auto lonely = test::test_kernel_files(kIdA, "a");
  auto& lmeta = lonely["build/" + host_variant() + "/metadata.json"].content;
  lmeta.replace(lmeta.find("\"python-depends\":[]"), 19,
                R"("python-depends":[],"kernel-depends":[{"repo-id":"org/elsewhere","version":1}])");
  hub_.commit("org/lonely", "v1", lonely);
  EXPECT_FALSE(*has_kernel("org/lonely", options(1)));
  EXPECT_EQ(get_kernel("org/lonely", options(1)).error().code, ErrorCode::NoVariant);

  // A cycle stops get_kernel before anything is downloaded or loaded.
  auto cyclic = test::test_kernel_files(kIdA, "a");
  auto& cmeta = cyclic["build/" + host_variant() + "/metadata.json"].content;
  cmeta.replace(cmeta.find("\"python-depends\":[]"), 19,
                R"("python-depends":[],"kernel-depends":[{"repo-id":"org/cycle","version":1}])");
  hub_.commit("org/cycle", "v1", cyclic);
  auto refused = get_kernel("org/cycle", options(1));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "Cyclic kernel dependency detected: org/cycle");
}

}  // namespace
