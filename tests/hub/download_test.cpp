// fetch_file / fetch_files against a real loopback server: cache layout, redirects and dropped
// auth, resume, ignored ranges, corruption, offline, cache fallback, concurrent processes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "fixture_hub.h"
#include "khub/base/hash.h"
#include "khub/hub/download.h"
#include "test_util.h"

namespace {
using namespace khub;
using namespace khub::hub;
using khub::test::FixtureHub;
using khub::test::TempDir;
namespace fs = std::filesystem;

const std::string kVariant = "torch212-cxx11-cu130-x86_64-linux";
const std::string kSo = "build/" + kVariant + "/_relu_cuda_abc1234.abi3.so";
const std::string kInit = "build/" + kVariant + "/__init__.py";

class DownloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    commit_ = hub_.commit("org/relu", "v1", test::sample_variant_files(kVariant, "_relu_cuda_abc1234", 300000));
  }
  ClientOptions options() {
    auto o = test::fixture_options(hub_, dir_.path());
    o.token = "hf_test_token_123456";
    return o;
  }
  // kSo fetched from the hub with these faults set.
  Expected<fs::path> fetch_so(const test::Faults& faults) {
    hub_.set_faults(faults);
    HubClient c(options());
    return fetch_file(c, repo_, commit_, kSo);
  }
  FixtureHub hub_;
  TempDir dir_;
  std::string commit_;
  RepoRef repo_{RepoType::Kernel, "org/relu"};
};

TEST_F(DownloadTest, RegularFileViaBranchWritesHfLayout) {
  HubClient c(options());
  auto p = fetch_file(c, repo_, "v1", kInit);
  ASSERT_TRUE(p) << p.error().describe();
  CacheLayout cache(dir_.path());
  EXPECT_EQ(*p, cache.snapshot_file(repo_, commit_, kInit));
  EXPECT_TRUE(fs::is_symlink(*p));
  EXPECT_EQ(fs::read_symlink(*p).string(), "../../../../blobs/" + git_blob_sha1_hex("from ._ops import ops\n"));
  EXPECT_EQ(test::slurp(*p), "from ._ops import ops\n");
  EXPECT_EQ(test::slurp(cache.ref_file(repo_, "v1")), commit_);
  // The 307 to resolve-cache is followed on the same host with the token.
  for (const auto& r : hub_.requests()) EXPECT_EQ(r.authorization, "Bearer hf_test_token_123456") << r.path;
  // Commit shortcut: no request at all.
  hub_.clear_requests();
  ASSERT_TRUE(fetch_file(c, repo_, commit_, kInit));
  EXPECT_TRUE(hub_.requests().empty());
}

// The etag is the hash the bytes are checked against: one that is no sha1 / sha256 would let a file
// in unchecked, so it is refused and nothing is cached (found by a security review).
TEST_F(DownloadTest, AnEtagThatIsNoHashIsRefused) {
  test::Faults f;
  f.etag = "cafe";
  hub_.set_faults(f);
  HubClient c(options());
  auto p = fetch_file(c, repo_, commit_, kInit);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::Protocol);
  EXPECT_NE(p.error().message.find("etag 'cafe' is neither a git sha1 nor a sha256"), std::string::npos)
      << p.error().message;
  EXPECT_FALSE(fs::exists(CacheLayout(dir_.path()).blob(repo_, "cafe")));
  EXPECT_FALSE(fs::exists(CacheLayout(dir_.path()).snapshot_file(repo_, commit_, kInit)));
}

TEST_F(DownloadTest, CopiesWhenSymlinksAreDisabled) {
  auto o = options();
  o.disable_symlinks = true;
  HubClient c(o);
  auto p = fetch_file(c, repo_, commit_, kInit);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_FALSE(fs::is_symlink(*p));
  EXPECT_EQ(test::slurp(*p), "from ._ops import ops\n");
  // A new blob moves into the snapshot (huggingface_hub's no-symlink cache): the bytes once.
  const CacheLayout cache(dir_.path());
  EXPECT_TRUE(fs::is_empty(cache.repo_dir(repo_) / "blobs"));
  // A blob already there (from a symlinked download) is copied and kept.
  HubClient linked(options());
  ASSERT_TRUE(fetch_file(linked, repo_, commit_, kSo));
  const fs::path blob = fs::canonical(cache.snapshot_file(repo_, commit_, kSo));
  fs::remove(cache.snapshot_file(repo_, commit_, kSo));
  auto copied = fetch_file(c, repo_, commit_, kSo);
  ASSERT_TRUE(copied) << copied.error().describe();
  EXPECT_FALSE(fs::is_symlink(*copied));
  EXPECT_TRUE(fs::exists(blob));
  EXPECT_EQ(fs::file_size(*copied), 300000u);
}

TEST_F(DownloadTest, LfsFromOtherHostWithoutToken) {
  HubClient c(options());
  auto p = fetch_file(c, repo_, commit_, kSo);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_EQ(fs::file_size(*p), 300000u);
  bool saw_cdn = false;
  for (const auto& r : hub_.requests()) {
    if (r.server == "cdn") {
      saw_cdn = true;
      EXPECT_EQ(r.authorization, "");
    } else {
      EXPECT_EQ(r.authorization, "Bearer hf_test_token_123456");
    }
  }
  EXPECT_TRUE(saw_cdn);
  std::string blob_name = fs::read_symlink(*p).filename();
  EXPECT_EQ(blob_name.size(), 64u);
  EXPECT_EQ(to_hex(*hash_file(*p, HashAlgorithm::Sha256)), blob_name);
}

// A hostile Hub or CDN cannot turn a download into another protocol's request (file://, gopher://
// ...): such a Location is refused before anything is sent, and nothing is cached.
TEST_F(DownloadTest, RedirectsToOtherProtocolsAreRefused) {
  const auto secret = dir_.path() / "secret.txt";  // outside the cache folder below
  std::ofstream(secret) << "local secret";
  for (const std::string& location : {"file://" + secret.string(), std::string("gopher://127.0.0.1:1/_SET%20x"),
                                     std::string("FILE://") + secret.string(), std::string("dict://127.0.0.1:1/")}) {
    for (bool at_cdn : {false, true}) {
      test::Faults f;
      f.match = at_cdn ? "/blobs/" : "/resolve/";
      (at_cdn ? f.cdn_location : f.lfs_location) = location;
      hub_.set_faults(f);
      HubClient c(options());
      auto p = fetch_file(c, repo_, commit_, kSo);
      ASSERT_FALSE(p) << location;
      EXPECT_EQ(p.error().code, ErrorCode::Protocol) << p.error().describe();
      EXPECT_NE(p.error().message.find("redirect to a non-HTTP URL refused"), std::string::npos) << p.error().describe();
      EXPECT_EQ(p.error().describe().find("local secret"), std::string::npos);
      for (const auto& e : fs::recursive_directory_iterator(dir_.path()))
        EXPECT_FALSE(e.is_regular_file() && e.path().string().find("blobs") != std::string::npos) << e.path();
    }
  }
  fs::remove(secret);
}

// Asked for a commit, the server must answer that commit: another one is refused, and nothing is
// written under its snapshot.
TEST_F(DownloadTest, AnotherCommitThanAskedIsRefused) {
  const std::string other(40, 'a');
  test::Faults f;
  f.match = "/resolve/";
  f.repo_commit = other;
  auto p = fetch_so(f);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::Protocol);
  EXPECT_NE(p.error().message.find("asked for commit " + commit_ + ", the server answered " + other), std::string::npos)
      << p.error().message;
  EXPECT_FALSE(fs::exists(CacheLayout(dir_.path()).repo_dir(repo_) / "snapshots" / other));
}

// A folder of the snapshot is no file: asking for it fails the same way cold or warm.
TEST_F(DownloadTest, AFolderIsNoFile) {
  HubClient c(options());
  ASSERT_TRUE(fetch_file(c, repo_, commit_, kSo));
  for (const std::string& folder : {std::string("build"), "build/" + kVariant}) {
    auto p = fetch_file(c, repo_, commit_, folder);
    ASSERT_FALSE(p) << folder;
    EXPECT_EQ(p.error().code, ErrorCode::EntryNotFound) << p.error().describe();
  }
}

TEST_F(DownloadTest, ResumesAfterDroppedConnection) {
  test::Faults f;
  f.match = "/blobs/";
  f.drop_count = 2;
  f.drop_after = 100000;
  hub_.set_faults(f);
  HubClient c(options());
  auto p = fetch_file(c, repo_, commit_, kSo);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_EQ(fs::file_size(*p), 300000u);
  std::vector<std::string> ranges;
  for (const auto& r : hub_.requests())
    if (r.server == "cdn") ranges.push_back(r.range);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0], "");
  EXPECT_EQ(ranges[1], "bytes=100000-");
  EXPECT_NE(ranges[2], "");
}

// A blob left half-downloaded (a killed khub, or Python: the same <etag>.incomplete name under the
// same lock) is resumed from its end; one whose bytes are wrong fails the hash, is removed, and the
// next try starts over.
TEST_F(DownloadTest, ResumesWhatAnInterruptedDownloadLeft) {
  const std::string so = test::sample_variant_files(kVariant, "_relu_cuda_abc1234", 300000).at(kSo).content;
  const std::string etag = sha256_hex(so);
  CacheLayout cache(dir_.path());
  fs::path partial = cache.blob(repo_, etag);
  partial += ".incomplete";
  fs::create_directories(partial.parent_path());
  std::ofstream(partial, std::ios::binary) << so.substr(0, 120000);
  HubClient c(options());
  auto p = fetch_file(c, repo_, commit_, kSo);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_EQ(test::slurp(*p), so);
  EXPECT_FALSE(fs::exists(partial));
  std::vector<std::string> ranges;
  for (const auto& r : hub_.requests())
    if (r.server == "cdn") ranges.push_back(r.range);
  EXPECT_EQ(ranges, std::vector<std::string>{"bytes=120000-"});

  // Wrong bytes in the partial: refused, removed, and the next download is whole.
  fs::remove_all(cache.repo_dir(repo_));
  fs::create_directories(partial.parent_path());
  std::ofstream(partial, std::ios::binary) << std::string(1000, 'x');
  auto bad = fetch_file(c, repo_, commit_, kSo);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::Integrity);
  EXPECT_FALSE(fs::exists(partial));
  auto again = fetch_file(c, repo_, commit_, kSo);
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_EQ(test::slurp(*again), so);
}

TEST_F(DownloadTest, RestartsWhenRangeIgnored) {
  test::Faults f;
  f.match = "/blobs/";
  f.drop_count = 1;
  f.drop_after = 70000;
  f.ignore_range = true;
  hub_.set_faults(f);
  HubClient c(options());
  auto p = fetch_file(c, repo_, commit_, kSo);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_EQ(to_hex(*hash_file(*p, HashAlgorithm::Sha256)), fs::read_symlink(*p).filename().string());
}

TEST_F(DownloadTest, CorruptBodyIsRejectedAndNothingKept) {
  test::Faults f;
  f.match = "/blobs/";
  f.corrupt = true;
  auto p = fetch_so(f);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::Integrity);
  EXPECT_NE(p.error().message.find("_relu_cuda_abc1234.abi3.so: sha256 mismatch"), std::string::npos);
  CacheLayout cache(dir_.path());
  EXPECT_TRUE(fs::is_empty(cache.repo_dir(repo_) / "blobs"));
  EXPECT_FALSE(fs::exists(cache.snapshot_file(repo_, commit_, kSo)));
}

TEST_F(DownloadTest, TruncatedBodyFailsAfterResumes) {
  test::Faults f;
  f.match = "/blobs/";
  f.drop_count = 100;
  f.drop_after = 0;
  hub_.set_faults(f);
  HubClient c(options());
  auto p = fetch_file(c, repo_, commit_, kSo);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::Network);
}

// A server that cuts every connection after 1,000 bytes lets each resume make progress; the 300 KB
// file would need 300 of them. The resumes a file may take grow with the bytes received (a few,
// then four per MiB), so this ends after a handful with a clear error and nothing kept.
TEST_F(DownloadTest, ResumesAreBoundedByTheBytesReceived) {
  test::Faults f;
  f.match = "/blobs/";
  f.drop_count = 100000;
  f.drop_after = 1000;
  hub_.set_faults(f);
  HubClient c(options());
  auto p = fetch_file(c, repo_, commit_, kSo);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::Network);
  EXPECT_NE(p.error().message.find("the connection dropped 9 times"), std::string::npos) << p.error().describe();
  int gets = 0;
  for (const auto& r : hub_.requests()) gets += r.server == "cdn";
  EXPECT_EQ(gets, 9);
  for (const auto& e : fs::recursive_directory_iterator(dir_.path()))
    EXPECT_EQ(e.path().filename().string().find(".incomplete"), std::string::npos) << e.path();
}

TEST_F(DownloadTest, MissingEntryLeavesNoExistMarker) {
  HubClient c(options());
  auto p = fetch_file(c, repo_, "v1", "kernel-status.toml");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::EntryNotFound);
  CacheLayout cache(dir_.path());
  EXPECT_TRUE(fs::exists(cache.no_exist(repo_, commit_, "kernel-status.toml")));
  auto opts = options();
  opts.offline = true;
  HubClient offline(opts);
  EXPECT_EQ(fetch_file(offline, repo_, "v1", "kernel-status.toml").error().code, ErrorCode::EntryNotFound);
}

TEST_F(DownloadTest, OfflineUsesCacheOnly) {
  {
    HubClient c(options());
    ASSERT_TRUE(fetch_file(c, repo_, "v1", kInit));
  }
  hub_.clear_requests();
  auto opts = options();
  opts.offline = true;
  HubClient offline(opts);
  auto p = fetch_file(offline, repo_, "v1", kInit);
  ASSERT_TRUE(p) << p.error().describe();
  auto miss = fetch_file(offline, repo_, "v1", kSo);
  EXPECT_EQ(miss.error().code, ErrorCode::OfflineMiss);
  EXPECT_TRUE(hub_.requests().empty());
}

TEST_F(DownloadTest, FallsBackToCacheWhenHubFails) {
  {
    HubClient c(options());
    ASSERT_TRUE(fetch_file(c, repo_, "v1", kInit));
  }
  test::Faults f;
  f.fail_count = 1000;
  f.fail_status = 500;
  hub_.set_faults(f);
  hub_.clear_requests();
  HubClient c(options());  // five retries configured
  auto p = fetch_file(c, repo_, "v1", kInit);
  ASSERT_TRUE(p) << p.error().describe();
  // A cached file costs one HEAD, no retries (huggingface_hub's fast fallback to the cache).
  EXPECT_EQ(hub_.requests().size(), 1u);
  // Not cached: the usual retries, then the Hub's error.
  hub_.clear_requests();
  auto uncached = fetch_file(c, repo_, "v1", kSo);
  ASSERT_FALSE(uncached);
  EXPECT_EQ(hub_.requests().size(), 6u);
}

TEST_F(DownloadTest, ParallelFilesAndUnwritableCache) {
  HubClient c(options());
  auto tree = c.list_tree(repo_, commit_, "build/" + kVariant, true);
  ASSERT_TRUE(tree);
  ASSERT_TRUE(fetch_files(c, repo_, commit_, *tree));
  CacheLayout cache(dir_.path());
  for (const auto& e : *tree)
    if (!e.directory) {
      EXPECT_TRUE(fs::exists(cache.snapshot_file(repo_, commit_, e.path))) << e.path;
    }

  // A cache root below a regular file cannot be created, even by root.
  fs::path blocker = dir_.path() / "not-a-dir";
  { std::ofstream(blocker) << "x"; }
  auto opts = options();
  opts.cache_dir = blocker / "cache";
  HubClient c2(opts);
  auto p = fetch_file(c2, repo_, commit_, kInit);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::Io);
  EXPECT_EQ(p.error().hint, "check that the cache folder is writable (KERNELS_CACHE / HF_HUB_CACHE)")
      << p.error().describe();
}

TEST_F(DownloadTest, ParallelDownloadsKeepTheUmask) {
  // Reading the umask used to set it to 0 for a moment, so a parallel worker could create a blob
  // or a folder world-writable (about one run in two with this many files) and leave it at 0.
  std::map<std::string, test::FixtureFile> files;
  for (int i = 0; i < 160; ++i)
    files["d" + std::to_string(i % 23) + "/e" + std::to_string(i % 7) + "/f" + std::to_string(i)] = {
        "file " + std::to_string(i), false};
  const std::string commit = hub_.commit("org/many", "main", files);
  const RepoRef repo{RepoType::Kernel, "org/many"};
  const mode_t before = ::umask(022);
  auto opts = options();
  opts.max_parallel_downloads = 8;
  HubClient c(opts);
  auto tree = c.list_tree(repo, commit, "", true);
  ASSERT_TRUE(tree);
  const bool ok = static_cast<bool>(fetch_files(c, repo, commit, *tree));
  const mode_t after = ::umask(before);
  ASSERT_TRUE(ok);
  EXPECT_EQ(after, 022);
  int entries = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_.path())) {
    if (fs::is_symlink(e.symlink_status())) continue;
    ++entries;
    const auto perms = e.status().permissions();
    EXPECT_EQ(perms & fs::perms::others_write, fs::perms::none) << e.path();
    const bool lock = e.path().string().find("/.locks/") != std::string::npos;  // 0664 by design
    if (!lock) {
      EXPECT_EQ(perms & fs::perms::group_write, fs::perms::none) << e.path();
    }
  }
  EXPECT_GT(entries, 160);
}

TEST_F(DownloadTest, TwoProcessesDownloadTheSameFile) {
  auto opts = options();
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      HubClient c(opts);
      auto p = fetch_file(c, repo_, commit_, kSo);
      ::_exit(p && fs::file_size(*p) == 300000u ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  CacheLayout cache(dir_.path());
  int blobs = 0;
  for (const auto& e : fs::directory_iterator(cache.repo_dir(repo_) / "blobs")) {
    EXPECT_EQ(e.path().filename().string().find(".incomplete"), std::string::npos);
    ++blobs;
  }
  EXPECT_EQ(blobs, 1);
}

}  // namespace
