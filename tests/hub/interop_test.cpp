// Interoperability with Python huggingface_hub (the venv's): for the same repo on a loopback Hub,
// both write the same cache tree; each reads offline what the other downloaded.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "fixture_hub.h"
#include "khub/hub/cache_tree.h"
#include "khub/hub/download.h"
#include "khub/hub/kernel_fetch.h"
#include "khub/hub/lookup.h"
#include "khub/hub/project.h"
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

// A whole revision; offline (HF_HUB_OFFLINE=1) it prints the name of the error instead of failing.
const char* kSnapshotScript = R"PY(
import sys
from huggingface_hub import snapshot_download
repo, rev, cache = sys.argv[1:4]
try:
    print(snapshot_download(repo, repo_type="kernel", revision=rev, cache_dir=cache))
except Exception as e:
    print(type(e).__name__, e)
    sys.exit(3)
)PY";

using khub::test::Run;

Run python(const std::string& env, const std::vector<std::string>& args, const char* script = kScript) {
  std::string cmd = "env -u HF_TOKEN " + env + " " KHUB_PYTHON " -c '" + script + "'";
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

// Relative path → "link:<target>" / "file:<content>" for every file under a cache root, lock files
// included. (Folders are not compared: khub's empty <repo folder>/.staging/ is its own.)
std::map<std::string, std::string> whole_cache(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    std::string rel = e.path().lexically_relative(root).generic_string();
    if (e.is_symlink()) out[rel] = "link:" + fs::read_symlink(e.path()).string();
    else if (e.is_regular_file()) out[rel] = "file:" + test::slurp(e.path());
  }
  return out;
}

// A whole revision, with a file outside build/ whose name JSON escapes.
class SnapshotInterop : public Interop {
 protected:
  void SetUp() override {
    auto files = test::sample_variant_files(kVariant, "_relu_cuda_abc1234", 200000);
    files["docs/caf\xc3\xa9.md"] = {"# notes\n", false};
    commit_ = hub_.commit("org/relu", "v1", files);
    env_ = "HF_ENDPOINT=" + hub_.endpoint() + " HF_HUB_DISABLE_TELEMETRY=1";
  }
  // snapshot_download of v1 by huggingface_hub.
  test::Run python_snapshot(const fs::path& cache, const std::string& env_extra = "") {
    return python(env_ + env_extra, {"org/relu", "v1", cache.string()}, kSnapshotScript);
  }
  // `khub download org/relu --all --revision v1`, through the library.
  Expected<std::vector<std::string>> khub_snapshot(const fs::path& cache, bool offline = false) {
    auto opts = test::fixture_options(hub_, cache);
    opts.offline = offline;
    HubClient client(opts);
    RepoLookup lookup{.repo_id = "org/relu", .type = RepoType::Kernel, .revision = "v1"};
    KHUB_TRY(auto at, find_revision(client, lookup));
    return download_files(client, at.repo, at.commit, {}, true);
  }
  const RepoRef repo_{RepoType::Kernel, "org/relu"};
};

TEST_F(SnapshotInterop, SameFilesAndBytesAsSnapshotDownload) {
  fs::path py_cache = dir_.path() / "py", khub_cache = dir_.path() / "khub";
  auto py = python_snapshot(py_cache);
  ASSERT_EQ(py.code, 0) << py.out;
  auto files = khub_snapshot(khub_cache);
  ASSERT_TRUE(files) << files.error().describe();
  EXPECT_EQ(files->size(), 6u);
  auto a = whole_cache(py_cache), b = whole_cache(khub_cache);
  EXPECT_EQ(a, b);
  // Not equal by both lacking them: the tag and the listing are there, with upstream's bytes.
  EXPECT_TRUE(b.count("CACHEDIR.TAG"));
  const std::string listing = "kernels--org--relu/trees/" + commit_ + ".json";
  ASSERT_TRUE(a.count(listing));
  EXPECT_NE(a[listing].find("\"docs/caf\\u00e9.md\""), std::string::npos) << a[listing];
}

TEST_F(SnapshotInterop, EachReadsTheOthersSnapshotOffline) {
  fs::path py_cache = dir_.path() / "py", khub_cache = dir_.path() / "khub";
  ASSERT_EQ(python_snapshot(py_cache).code, 0);
  ASSERT_TRUE(khub_snapshot(khub_cache));
  hub_.clear_requests();

  // khub offline on huggingface_hub's cache: the whole revision, every file checked against its listing.
  auto khub_reads = khub_snapshot(py_cache, true);
  ASSERT_TRUE(khub_reads) << khub_reads.error().describe();
  EXPECT_EQ(khub_reads->size(), 6u);
  auto check = verify_cached_snapshot(CacheLayout(py_cache), repo_, commit_);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->has_listing);
  EXPECT_TRUE(check->passed) << (check->problems.empty() ? "" : check->problems.front());
  // huggingface_hub offline on khub's cache.
  auto py_reads = python_snapshot(khub_cache, " HF_HUB_OFFLINE=1");
  ASSERT_EQ(py_reads.code, 0) << py_reads.out;
  EXPECT_NE(py_reads.out.find((khub_cache / "kernels--org--relu" / "snapshots" / commit_).string() + "\n"),
            std::string::npos) << py_reads.out;
  EXPECT_TRUE(hub_.requests().empty());

  // A file gone from each snapshot: each client refuses the other's incomplete snapshot, which it can
  // only tell from the listing the other wrote.
  const std::string gone = "build/" + kVariant + "/_ops.py";
  fs::remove(CacheLayout(py_cache).snapshot_file(repo_, commit_, gone));
  fs::remove(CacheLayout(khub_cache).snapshot_file(repo_, commit_, gone));
  auto khub_refuses = khub_snapshot(py_cache, true);
  ASSERT_FALSE(khub_refuses);
  EXPECT_EQ(khub_refuses.error().code, ErrorCode::OfflineMiss);
  EXPECT_NE(khub_refuses.error().message.find("incomplete: 1 file(s)"), std::string::npos)
      << khub_refuses.error().message;
  EXPECT_NE(khub_refuses.error().message.find(gone), std::string::npos) << khub_refuses.error().message;
  auto py_refuses = python_snapshot(khub_cache, " HF_HUB_OFFLINE=1");
  EXPECT_EQ(py_refuses.code, 3) << py_refuses.out;
  EXPECT_NE(py_refuses.out.find("IncompleteSnapshotError"), std::string::npos) << py_refuses.out;
  EXPECT_NE(py_refuses.out.find(gone), std::string::npos) << py_refuses.out;
  EXPECT_TRUE(hub_.requests().empty());

  // Online, khub takes the commit's listing from huggingface_hub's cache, as snapshot_download does,
  // and fetches only what is missing.
  auto refill = khub_snapshot(py_cache);
  ASSERT_TRUE(refill) << refill.error().describe();
  for (const auto& r : hub_.requests()) EXPECT_EQ(r.path.find("/tree/"), std::string::npos) << r.path;
  EXPECT_TRUE(fs::exists(CacheLayout(py_cache).snapshot_file(repo_, commit_, gone)));
}

}  // namespace
