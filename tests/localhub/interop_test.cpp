// Interop: the official Python clients (huggingface_hub, kernels) from the venv at KHUB_PYTHON
// run tests/localhub/interop_*.py against an in-process server. Skips without that Python.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "khub/localhub/server.h"

extern char** environ;

namespace khub::localhub {
namespace {

int run(const std::vector<std::string>& args, const std::vector<std::string>& extra_env) {
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) env_store.emplace_back(*e);
  env_store.insert(env_store.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp, argv;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> a = args;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class InteropTest : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("khub-interop-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}()));
  void SetUp() override {
    if (access(KHUB_PYTHON, X_OK) != 0 || run({KHUB_PYTHON, "-c", "import huggingface_hub, kernels"}, {}) != 0) {
      GTEST_SKIP() << "no Python with huggingface_hub and kernels at " << KHUB_PYTHON;
    }
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (HasFailure() || std::getenv("KHUB_INTEROP_LOG")) {  // what the server saw, to tell which side failed
      for (const auto& line : requests_) std::cerr << "  server: " << line << '\n';
    }
    std::filesystem::remove_all(dir_);
  }

  // Requests the server answered during the last run_script ("POST /v1/shards" ...).
  std::mutex log_mutex_;
  std::vector<std::string> requests_;

  int run_script(ServerConfig config, const std::string& script, std::vector<std::string> env) {
    ServerOptions o;
    o.root = dir_ / "store";
    o.config = std::move(config);
    o.request_log = [this](std::string_view line) {
      std::lock_guard lock(log_mutex_);
      requests_.emplace_back(line);
    };
    Server server(std::move(o));
    auto st = server.start();
    EXPECT_TRUE(st) << (st ? "" : st.error().message);
    env.push_back("HF_ENDPOINT=" + server.url());
    env.push_back("HF_HOME=" + (dir_ / "hf-home").string());
    env.push_back("HF_XET_CACHE=" + (dir_ / "xet-cache").string());  // stale shard caches change what hf_xet sends
    return run({KHUB_PYTHON, std::string(KHUB_SOURCE_DIR) + "/tests/localhub/" + script}, env);
  }

  std::size_t answered(std::string_view method_and_path_prefix, int status = 200) {
    std::lock_guard lock(log_mutex_);
    const std::string wanted = "\"" + std::string(method_and_path_prefix);
    const std::string code = "\" " + std::to_string(status) + " ";
    return static_cast<std::size_t>(std::count_if(requests_.begin(), requests_.end(), [&](const std::string& line) {
      auto at = line.find(wanted);
      return at != std::string::npos && line.find(code, at) != std::string::npos;
    }));
  }
};

TEST_F(InteropTest, HuggingfaceHubUploadsAndDownloadsThroughLfsWithXetDisabled) {
  // The one test with HF_HUB_DISABLE_XET=1, on purpose: clients without Xet still upload through
  // Git LFS (basic and multipart) and download through LFS redirects.
  // Tokens on, branch downloads through the Hub's relative 307, and LFS redirects to another host name (localhost vs 127.0.0.1), so the client
  // takes its cross-host path: metadata from the 302 and no Authorization on the blob URL.
  ServerConfig c;
  c.tokens.push_back(TokenGrant{"hf_interop_write", "interop", true, {"interop-org"}, {}});
  c.blob_base_url = "http://localhost:{port}";
  c.lfs_chunk_size = 8ull << 20;  // the 21 MB file goes multipart
  c.resolve_cache_redirects = true;  // regular files by branch: 307 to /api/resolve-cache/…
  EXPECT_EQ(run_script(c, "interop_hub.py", {"HF_TOKEN=hf_interop_write", "HF_HUB_DISABLE_XET=1"}), 0);
  EXPECT_GT(answered("PUT /lfs-upload/"), 0u);
  EXPECT_EQ(answered("POST /v1/"), 0u);
}

TEST_F(InteropTest, DefaultHuggingfaceHubUploadsAndDownloadsThroughXet) {
  // huggingface_hub 2.4.0 as pip installs it (hf_xet 1.8.0): large files go to the CAS as xorbs and
  // a shard, and come back through reconstructions and signed fetch URLs.
  ServerConfig c;
  c.tokens.push_back(TokenGrant{"hf_xet_write", "xet", true, {"xet-org"}, {}});
  EXPECT_EQ(run_script(c, "interop_xet.py", {"HF_TOKEN=hf_xet_write"}), 0);
  EXPECT_GT(answered("GET /api/models/xet-org/folder/xet-write-token/"), 0u);
  EXPECT_GT(answered("POST /v1/xorbs/"), 0u);
  EXPECT_GT(answered("POST /v1/shards"), 0u);
  EXPECT_GT(answered("GET /v1/reconstructions/"), 0u);
  EXPECT_GT(answered("GET /v1/xorb-data/", 206), 0u);
  EXPECT_EQ(answered("PUT /lfs-upload/"), 0u);  // nothing went through LFS
}

// The interop matrix's cross cell: what huggingface_hub + hf_xet uploaded, khub downloads through
// the CAS (reconstruction, xorb range reads), byte for byte. (khub push → huggingface_hub is in
// tests/publish/xet_interop_test.cpp; each client → itself in the tests around.)
TEST_F(InteropTest, KhubDownloadsThroughXetWhatHuggingfaceHubUploaded) {
  ServerConfig c;
  c.tokens.push_back(TokenGrant{"hf_cross_write", "cross", true, {"cross-org"}, {}});
  ServerOptions o;
  o.root = dir_ / "store";
  o.config = std::move(c);
  o.request_log = [this](std::string_view line) {
    std::lock_guard lock(log_mutex_);
    requests_.emplace_back(line);
  };
  Server server(std::move(o));
  ASSERT_TRUE(server.start());
  const auto expect = dir_ / "expect";
  ASSERT_EQ(run({KHUB_PYTHON, std::string(KHUB_SOURCE_DIR) + "/tests/localhub/interop_xet_upload.py", "cross-org/data"},
                {"HF_ENDPOINT=" + server.url(), "HF_TOKEN=hf_cross_write", "HF_HOME=" + (dir_ / "hf-home").string(),
                 "HF_XET_CACHE=" + (dir_ / "xet-cache").string(), "KHUB_EXPECT_DIR=" + expect.string()}),
            0);
  ASSERT_GT(answered("POST /v1/shards"), 0u) << "hf_xet uploaded through Xet";
  {
    std::lock_guard lock(log_mutex_);
    requests_.clear();
  }
  const auto cache = dir_ / "khub-cache";
  ASSERT_EQ(run({KHUB_CLI, "download", "cross-org/data", "--all", "--repo-type", "model", "--cache-dir", cache.string(),
                 "-q"},
                {"HF_ENDPOINT=" + server.url(), "HF_TOKEN=hf_cross_write"}),
            0);
  EXPECT_GE(answered("GET /v1/reconstructions/"), 3u) << "each large file came through the CAS";
  EXPECT_EQ(answered("GET /api/models/cross-org/data/xet-read-token/"), 1u) << "one token for the snapshot";
  EXPECT_GT(answered("GET /v1/xorb-data/", 206), 0u);
  EXPECT_EQ(answered("GET /cross-org/data/resolve/"), 2u) << "only the two small regular files by their URL";
  std::size_t compared = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(expect)) {
    if (!e.is_regular_file()) continue;
    const auto rel = std::filesystem::relative(e.path(), expect);
    std::filesystem::path got;
    for (const auto& s : std::filesystem::recursive_directory_iterator(cache))
      if (s.path().string().find("/snapshots/") != std::string::npos &&
          s.path().string().ends_with("/" + rel.string()))
        got = s.path();
    ASSERT_FALSE(got.empty()) << rel;
    std::ifstream a(e.path(), std::ios::binary), b(got, std::ios::binary);
    const std::string want{std::istreambuf_iterator<char>(a), {}}, have{std::istreambuf_iterator<char>(b), {}};
    EXPECT_TRUE(want == have) << rel << ": " << want.size() << " vs " << have.size() << " bytes";
    ++compared;
  }
  EXPECT_EQ(compared, 4u);
}

TEST_F(InteropTest, KernelsGetKernelFromTrustedPublisher) {
  ServerConfig c;
  c.trusted_orgs = {"kernels-interop"};
  EXPECT_EQ(run_script(c, "interop_kernels.py", {"KHUB_TRUSTED_ORG=kernels-interop"}), 0);
  EXPECT_GT(answered("POST /v1/shards"), 0u);  // the variant's data file went through Xet
  EXPECT_GT(answered("GET /v1/reconstructions/"), 0u);
}

TEST_F(InteropTest, KhubLockWritesWhatKernelsLockWrites) {
  ServerConfig c;
  c.trusted_orgs = {"lock-interop"};
  EXPECT_EQ(run_script(c, "interop_lock.py", {"KHUB_TRUSTED_ORG=lock-interop", std::string("KHUB_CLI=") + KHUB_CLI}),
            0);
}

}  // namespace
}  // namespace khub::localhub
