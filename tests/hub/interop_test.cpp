// Interoperability with Python huggingface_hub (the venv's): for the same repo on a loopback Hub,
// both write the same cache tree; each reads offline what the other downloaded.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "fixture_hub.h"
#include "khub/hub/download.h"
#include "khub/hub/kernel_fetch.h"
#include "test_util.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;
using namespace khub::hub;

const std::string kVariant = "torch212-cxx11-cu130-x86_64-linux";

const char* kScript = R"PY(
import sys
from huggingface_hub import hf_hub_download
repo, rev, cache = sys.argv[1:4]
for f in sys.argv[4:]:
    print(hf_hub_download(repo, f, repo_type="kernel", revision=rev, cache_dir=cache))
)PY";

using khub::test::Run;

Run python(const std::string& env, const std::vector<std::string>& args) {
  std::string cmd = "env -u HF_TOKEN " + env + " " KHUB_PYTHON " -c '" + kScript + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  return khub::test::run_shell(cmd);
}

variants::HostInfo host() {
  variants::HostInfo h;
  h.torch = variants::Version{2, 12};
  h.cxx11_abi = true;
  h.backend = variants::Backend{variants::BackendKind::Cuda, variants::Version{13, 0}};
  return h;
}

// Relative path → "link:<target>" / "file:<content>" for blobs, snapshots and refs of one repo folder.
std::map<std::string, std::string> cache_tree(const fs::path& repo_dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(repo_dir)) {
    std::string rel = e.path().lexically_relative(repo_dir).generic_string();
    if (rel.rfind("blobs/", 0) != 0 && rel.rfind("snapshots/", 0) != 0 && rel.rfind("refs/", 0) != 0) continue;
    if (e.is_symlink()) out[rel] = "link:" + fs::read_symlink(e.path()).string();
    else if (e.is_regular_file()) out[rel] = "file:" + test::slurp(e.path());
  }
  return out;
}

class Interop : public ::testing::Test {
 protected:
  void SetUp() override {
    auto files = test::sample_variant_files(kVariant, "_relu_cuda_abc1234", 200000);
    commit_ = hub_.commit("org/relu", "v1", files);
    for (const auto& [p, f] : files) paths_.push_back(p);
    hub_.set_trusted("org", true);
    env_ = "HF_ENDPOINT=" + hub_.endpoint() + " HF_HUB_DISABLE_TELEMETRY=1";
  }
  test::FixtureHub hub_;
  test::TempDir dir_;
  std::string commit_, env_;
  std::vector<std::string> paths_;
};

TEST_F(Interop, SameCacheTreeAsHuggingfaceHub) {
  fs::path py_cache = dir_.path() / "py", khub_cache = dir_.path() / "khub";
  std::vector<std::string> args = {"org/relu", "v1", py_cache.string()};
  args.insert(args.end(), paths_.begin(), paths_.end());
  auto py = python(env_, args);
  ASSERT_EQ(py.code, 0) << py.out;

  auto opts = test::fixture_options(hub_, khub_cache);
  HubClient client(opts);
  for (const auto& p : paths_) ASSERT_TRUE(fetch_file(client, RepoRef{RepoType::Kernel, "org/relu"}, "v1", p));
  auto a = cache_tree(py_cache / "kernels--org--relu");
  auto b = cache_tree(khub_cache / "kernels--org--relu");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.at("refs/v1"), "file:" + commit_);
}

TEST_F(Interop, EachReadsTheOthersCacheOffline) {
  // khub downloads the kernel (fetch_kernel); Python reads it offline.
  fs::path khub_cache = dir_.path() / "khub";
  {
    HubClient client(test::fixture_options(hub_, khub_cache));
    KernelRequest r;
    r.repo_id = "org/relu";
    r.options.version = 1;
    ASSERT_TRUE(fetch_kernel(client, host(), r));
  }
  hub_.clear_requests();
  std::vector<std::string> args = {"org/relu", "v1", khub_cache.string()};
  args.insert(args.end(), paths_.begin(), paths_.end());
  auto py = python(env_ + " HF_HUB_OFFLINE=1", args);
  ASSERT_EQ(py.code, 0) << py.out;
  EXPECT_NE(py.out.find(commit_), std::string::npos);
  EXPECT_TRUE(hub_.requests().empty());

  // Python downloads; khub loads offline (version 1 through refs/v1, which Python wrote).
  fs::path py_cache = dir_.path() / "py";
  args[2] = py_cache.string();
  ASSERT_EQ(python(env_, args).code, 0);
  hub_.clear_requests();
  auto opts = test::fixture_options(hub_, py_cache);
  opts.offline = true;
  HubClient offline(opts);
  KernelRequest r;
  r.repo_id = "org/relu";
  r.options.version = 1;
  auto k = fetch_kernel(offline, host(), r);
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_TRUE(k->verified);
  EXPECT_EQ(k->commit, commit_);
  EXPECT_TRUE(hub_.requests().empty());
}

}  // namespace
