// kernel-depends trees against a loopback Hub with a fixed host: load order, diamonds, cycles,
// Python-only (noarch) dependencies, trust, locks, LOCAL_KERNELS, offline, and the noarch-only error.
#include <gtest/gtest.h>

#include <fstream>

#include "fixture_hub.h"
#include "khub/hub/kernel_tree.h"
#include "test_util.h"

namespace {
using namespace khub;
using namespace khub::hub;
namespace fs = std::filesystem;

const std::string kVariant = "torch212-cxx11-cu130-x86_64-linux";

variants::HostInfo h200() {
  variants::HostInfo h;
  h.torch = variants::Version{2, 12};
  h.cxx11_abi = true;
  h.backend = variants::Backend{variants::BackendKind::Cuda, variants::Version{13, 0}};
  h.cuda_capability = variants::Version{9, 0};
  return h;
}

// One variant of a kernel whose metadata.json declares `depends` (kernel-depends as JSON).
std::map<std::string, test::FixtureFile> kernel(const std::string& id, const std::string& depends = "[]",
                                                const std::string& variant = kVariant) {
  auto files = test::sample_variant_files(variant, id);
  auto& meta = files["build/" + variant + "/metadata.json"].content;
  meta.replace(meta.find("\"python-depends\":[]"), 19, "\"python-depends\":[],\"kernel-depends\":" + depends);
  return files;
}

std::string names(const std::vector<ResolvedDependency>& deps) {
  std::string out;
  for (const auto& d : deps) out += (out.empty() ? "" : " ") + describe(d.dependency);
  return out;
}

std::string notes(const Error& e) {
  std::string out;
  for (const auto& n : e.notes) out += n + "\n";
  return out;
}

class TreeTest : public ::testing::Test {
 protected:
  void SetUp() override { hub_.set_trusted("org", true); }
  KernelRequest request(const std::string& repo, int version = 1) {
    KernelRequest r;
    r.repo_id = repo;
    r.options.version = version;
    return r;
  }
  Expected<KernelTree> fetch(const KernelRequest& r, bool offline = false, const protocol::LockFile* lock = nullptr,
                             std::vector<std::pair<std::string, fs::path>> local = {}) {
    auto o = test::fixture_options(hub_, cache_.path());
    o.offline = offline;
    o.local_kernels = std::move(local);
    HubClient c(o);
    return fetch_kernel_tree(c, h200(), r, lock);
  }
  fs::path snapshot(const std::string& repo, const std::string& commit) {
    return cache_.path() / ("kernels--" + repo.substr(0, repo.find('/')) + "--" + repo.substr(repo.find('/') + 1)) /
           "snapshots" / commit;
  }
  test::FixtureHub hub_;
  test::TempDir cache_;
};

// app -> [dep v1, einops v1]; dep -> leaf@main. Dependencies come first (depth first, declaration
// order); a noarch-only dependency is fetched as Python would load it and marked not loadable.
TEST_F(TreeTest, ResolvesEveryNodeDependenciesFirst) {
  const std::string leaf = hub_.commit("org/leaf", "main", kernel("_leaf_1"));
  const std::string dep = hub_.commit("org/dep", "v1", kernel("_dep_1", R"([{"repo-id":"org/leaf","revision":"main"}])"));
  auto py = kernel("_einops_1", "[]", "torch-cuda");
  auto py_rocm = kernel("_einops_1", "[]", "torch-rocm");
  py.insert(py_rocm.begin(), py_rocm.end());
  const std::string einops = hub_.commit("org/einops", "v1", py);
  const std::string app = hub_.commit(
      "org/app", "v1",
      kernel("_app_1", R"([{"repo-id":"org/dep","version":1},{"repo-id":"org/einops","version":1}])"));

  auto tree = fetch(request("org/app"));
  ASSERT_TRUE(tree) << tree.error().describe();
  EXPECT_EQ(tree->kernel.commit, app);
  EXPECT_EQ(names(tree->dependencies),
            "org/leaf (revision: main) org/dep (version: 1) org/einops (version: 1)");
  const auto& d = tree->dependencies;
  EXPECT_EQ(d[0].kernel.commit, leaf);
  EXPECT_EQ(d[0].dependent, "org/dep");
  EXPECT_EQ(d[1].kernel.commit, dep);
  EXPECT_EQ(d[1].dependent, "org/app");
  for (const auto& node : d) EXPECT_TRUE(node.kernel.verified) << node.kernel.repo.id;
  EXPECT_TRUE(d[0].kernel.loadable && d[1].kernel.loadable);
  EXPECT_FALSE(d[2].kernel.loadable);
  EXPECT_EQ(d[2].kernel.variant, "torch-cuda");
  EXPECT_TRUE(fs::exists(snapshot("org/einops", einops) / "build/torch-cuda/_einops_1.abi3.so"));
  EXPECT_FALSE(fs::exists(snapshot("org/einops", einops) / "build/torch-rocm"));
  EXPECT_TRUE(fs::exists(snapshot("org/leaf", leaf) / "build" / kVariant / "_leaf_1.abi3.so"));
  ASSERT_EQ(tree->python_only().size(), 1u);
  EXPECT_EQ(python_only_warning(*tree->python_only()[0]),
            "kernel dependency org/einops (version: 1) of org/app has only a Python-only build here (torch-cuda): "
            "downloaded and verified, not loaded (the Python `kernels` package loads it)");

  // Offline, the same tree comes from the cache alone.
  auto cached = fetch(request("org/app"), /*offline=*/true);
  ASSERT_TRUE(cached) << cached.error().describe();
  EXPECT_EQ(names(cached->dependencies), names(tree->dependencies));

  // The top kernel itself: only Python-only builds exist, named.
  auto top = fetch(request("org/einops"));
  ASSERT_FALSE(top);
  EXPECT_EQ(top.error().code, ErrorCode::NoVariant);
  EXPECT_EQ(top.error().message,
            "only Python-only builds exist in org/einops (revision: " + einops + "): torch-cuda, torch-rocm");
  EXPECT_NE(top.error().hint.find("Python `kernels` package"), std::string::npos);
}

TEST_F(TreeTest, DiamondsResolveOnceAndCyclesAreRefused) {
  hub_.commit("org/d", "v1", kernel("_d_1"));
  hub_.commit("org/b", "v1", kernel("_b_1", R"([{"repo-id":"org/d","version":1}])"));
  hub_.commit("org/c", "v1", kernel("_c_1", R"([{"repo-id":"org/d","version":1}])"));
  hub_.commit("org/a", "v1",
              kernel("_a_1", R"([{"repo-id":"org/b","version":1},{"repo-id":"org/c","version":1}])"));
  auto diamond = fetch(request("org/a"));
  ASSERT_TRUE(diamond) << diamond.error().describe();
  EXPECT_EQ(names(diamond->dependencies), "org/d (version: 1) org/b (version: 1) org/c (version: 1)");

  hub_.commit("org/x", "v1", kernel("_x_1", R"([{"repo-id":"org/y","version":1}])"));
  hub_.commit("org/y", "v1", kernel("_y_1", R"([{"repo-id":"org/x","version":1}])"));
  auto cycle = fetch(request("org/x"));
  ASSERT_FALSE(cycle);
  EXPECT_EQ(cycle.error().code, ErrorCode::InvalidMetadata);
  EXPECT_EQ(cycle.error().message, "Cyclic kernel dependency detected: org/x");
  EXPECT_NE(notes(cycle.error()).find("kernel dependency org/y (version: 1) of org/x"), std::string::npos);
  // A kernel naming itself at another version is no cycle (kernels keys by repo and version).
  hub_.commit("org/self", "v2", kernel("_self_2"));
  hub_.commit("org/self", "v1", kernel("_self_1", R"([{"repo-id":"org/self","version":2}])"));
  EXPECT_TRUE(fetch(request("org/self")));
}

// A node that cannot be resolved fails the whole tree with its own error (as kernels raises it),
// noted with the chain of dependents, and nothing of the tree is downloaded.
TEST_F(TreeTest, UnresolvableNodesFailBeforeAnyDownload) {
  hub_.commit("org/mid", "v1", kernel("_mid_1", R"([{"repo-id":"org/gone","version":1}])"));
  const std::string app = hub_.commit("org/app", "v1", kernel("_app_1", R"([{"repo-id":"org/mid","version":1}])"));
  auto missing = fetch(request("org/app"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::RepoNotFound);
  const std::string n = notes(missing.error());
  EXPECT_NE(n.find("kernel dependency org/gone (version: 1) of org/mid"), std::string::npos) << n;
  EXPECT_NE(n.find("kernel dependency org/mid (version: 1) of org/app"), std::string::npos) << n;
  EXPECT_FALSE(fs::exists(snapshot("org/app", app) / "build" / kVariant / "_app_1.abi3.so"));

  hub_.commit("org/late", "v1", kernel("_late_1"));
  hub_.commit("org/old", "v1", kernel("_old_1", R"([{"repo-id":"org/late","version":3}])"));
  auto version = fetch(request("org/old"));
  ASSERT_FALSE(version);
  EXPECT_EQ(version.error().message, "Version 3 not found, available versions: 1");

  // Every node passes the publisher check, unless the caller trusts remote code.
  hub_.commit("stray/k", "v1", kernel("_stray_1"));
  hub_.set_trusted("stray", false);
  hub_.commit("org/user", "v1", kernel("_user_1", R"([{"repo-id":"stray/k","version":1}])"));
  auto untrusted = fetch(request("org/user"));
  ASSERT_FALSE(untrusted);
  EXPECT_EQ(untrusted.error().code, ErrorCode::Untrusted);
  EXPECT_EQ(untrusted.error().message.rfind("Kernel repository 'stray/k' is not from a trusted publisher", 0), 0u);
  auto trusting = request("org/user");
  trusting.options.trust_remote_code = true;
  EXPECT_TRUE(fetch(trusting));
}

// Locked loads take each node's commit from the lock (keyed by repo and version or revision);
// LOCAL_KERNELS overrides a node before the Hub is asked.
TEST_F(TreeTest, LocksAndLocalOverridesApplyToEveryNode) {
  const std::string dep_v1 = hub_.commit("org/dep", "v1", kernel("_dep_a"));
  hub_.commit("org/dep", "v1", kernel("_dep_b"));  // v1 moved on since the lock was written
  const std::string app = hub_.commit("org/app", "v1", kernel("_app_1", R"([{"repo-id":"org/dep","version":1}])"));
  protocol::LockFile lock;
  lock.current = {{"org/app", 1, std::nullopt, app, std::nullopt}, {"org/dep", 1, std::nullopt, dep_v1, std::nullopt}};
  KernelRequest pinned;
  pinned.repo_id = "org/app";
  pinned.options.revision = app;
  pinned.follow_redirect = false;
  auto locked = fetch(pinned, false, &lock);
  ASSERT_TRUE(locked) << locked.error().describe();
  ASSERT_EQ(locked->dependencies.size(), 1u);
  EXPECT_EQ(locked->dependencies[0].kernel.commit, dep_v1);
  EXPECT_EQ(locked->dependencies[0].kernel.metadata.id, "_dep_a");

  lock.current.pop_back();
  auto unlocked = fetch(pinned, false, &lock);
  ASSERT_FALSE(unlocked);
  EXPECT_EQ(unlocked.error().message,
            "Kernel `org/dep` is not locked. Please lock it with `kernels lock <project>` and then reinstall the "
            "project.");

  test::TempDir local;
  for (const auto& [path, file] : kernel("_dep_local")) {
    fs::create_directories((local.path() / path).parent_path());
    std::ofstream(local.path() / path, std::ios::binary) << file.content;
  }
  auto overridden = fetch(request("org/app"), false, nullptr, {{"org/dep", local.path()}});
  ASSERT_TRUE(overridden) << overridden.error().describe();
  ASSERT_EQ(overridden->dependencies.size(), 1u);
  EXPECT_TRUE(overridden->dependencies[0].local);
  EXPECT_EQ(overridden->dependencies[0].kernel.metadata.id, "_dep_local");
  EXPECT_TRUE(overridden->dependencies[0].kernel.verified);
}

// A Hub can name ever new repos: a chain deeper than khub's bound is refused, not followed.
TEST_F(TreeTest, DeepChainsAreBounded) {
  for (int i = 0; i < 34; ++i)
    hub_.commit("org/k" + std::to_string(i), "v1",
                kernel("_k" + std::to_string(i), R"([{"repo-id":"org/k)" + std::to_string(i + 1) + R"(","version":1}])"));
  hub_.commit("org/k34", "v1", kernel("_k34"));
  auto deep = fetch(request("org/k0"));
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().message, "kernel-depends tree too large: more than 32 levels");
  EXPECT_TRUE(fetch(request("org/k3")));  // 31 levels below it: within the bound
}

}  // namespace
