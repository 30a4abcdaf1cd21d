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

}  // namespace
