// Many processes, one cache (issue 32, class 5): N `khub download` processes fetch the same kernel
// into one cache at once, on a cold cache and then on the warm one, a few rounds; every one must
// succeed and the cache must be whole afterwards (no temp names, every pointer resolves, the
// variant verifies). Loopback only (FixtureHub); bounded in time (each round is killed at its
// deadline and counts as failed).
//
// KHUB_RACE_ROUNDS=<n> raises the number of rounds (each round: 8 cold, 8 warm, 32 cold, 32 warm
// processes = 80 runs; default 2) to measure a success rate; then 8 cold and 8 warm in copy mode
// (HF_HUB_DISABLE_SYMLINKS). The test prints the rate either way.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "fixture_hub.h"
#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/hub/download.h"
#include "khub/hub/kernel_fetch.h"
#include "test_util.h"

extern char** environ;

namespace {
namespace fs = std::filesystem;
using khub::test::FixtureFile;
using khub::test::FixtureHub;
using khub::test::TempDir;

const std::string kVariant = "torch212-cxx11-cu130-x86_64-linux";
const std::string kId = "_relu_cuda_abc1234";

// A variant of many files (more pointers made at once, so more chances to meet another process's
// half-made one), some LFS, with a digest in metadata.json.
std::map<std::string, FixtureFile> many_files_variant() {
  std::map<std::string, std::pair<std::string, bool>> files;
  files["__init__.py"] = {"from ._ops import ops\n", false};
  files["_ops.py"] = {"import torch\nops = torch.ops." + kId + "\n", false};
  std::string so(64 * 1024, '\0');
  for (std::size_t i = 0; i < so.size(); ++i) so[i] = static_cast<char>((i * 131 + 7) & 0xff);
  files[kId + ".abi3.so"] = {so, true};
  for (int i = 0; i < 12; ++i) {
    files["layers/l" + std::to_string(i) + ".py"] = {"# layer " + std::to_string(i) + "\n", false};
    files["data/blob" + std::to_string(i) + ".bin"] = {std::string(8192 + i, static_cast<char>('a' + i)), i % 2 == 0};
  }
  std::string digest;
  for (const auto& [path, f] : files) {
    khub::Hasher h(khub::HashAlgorithm::Sha256);
    h.update(f.first);
    digest += std::string(digest.empty() ? "" : ",") + "\"" + path + "\":\"" + khub::base64_encode(h.finish()) + "\"";
  }
  std::map<std::string, FixtureFile> out;
  for (const auto& [path, f] : files) out["build/" + kVariant + "/" + path] = {f.first, f.second};
  out["build/" + kVariant + "/metadata.json"] = {
      "{\"name\":\"sample\",\"id\":\"" + kId +
          "\",\"version\":1,\"license\":\"Apache-2.0\",\"python-depends\":[],\"backend\":{\"type\":\"cuda\"},"
          "\"digest\":{\"algorithm\":\"sha256\",\"files\":{" + digest + "}}}",
      false};
  return out;
}

struct RoundResult {
  int ok = 0;
  int failed = 0;
  std::string first_error;  // the stderr of the first failed process
  std::vector<std::string> errors;  // the first line of each failure's stderr
};

class CacheRaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    commit_ = hub_.commit("org/relu", "v1", many_files_variant());
    hub_.set_trusted("org", true);
    host_ = work_.path() / "host.json";
    std::ofstream(host_) << R"({"os":"linux","cpu":"x86_64","torch":"2.12","cxx11_abi":true,"backend":"cuda",)"
                            R"("backend_version":"13.0","tvm_ffi":null,"macos":null})";
  }

  // Starts n `khub download` processes at once on `cache` and waits for them all (killing any left at
  // the deadline). Odd-numbered processes download the whole repo (--all), the others the variant
  // (fetch_kernel: the digest check of get_kernel).
  RoundResult round(int n, const fs::path& cache, std::chrono::seconds limit, const std::string& extra_env = "") {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      std::string_view s(*e);
      if (s.starts_with("HF_") || s.starts_with("KERNELS_") || s.starts_with("KHUB_")) continue;
      env_strings.emplace_back(s);
    }
    env_strings.push_back("HF_ENDPOINT=" + hub_.endpoint());
    env_strings.push_back("HF_HUB_CACHE=" + cache.string());
    if (!extra_env.empty()) env_strings.push_back(extra_env);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    const std::string khub = KHUB_BINARY_DIR "/bin/khub";
    std::vector<pid_t> pids;
    std::vector<fs::path> logs;
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> args = {khub, "download", "org/relu", "--quiet"};
      if (i % 2 == 1) {
        args.insert(args.end(), {"--all", "--revision", "v1"});
      } else {
        args.insert(args.end(), {"--version", "1", "--host", host_.string()});
      }
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      fs::path log = work_.path() / ("p" + std::to_string(i) + ".err");
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
      posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      pid_t pid = -1;
      int rc = posix_spawn(&pid, khub.c_str(), &fa, nullptr, argv.data(), envp.data());
      posix_spawn_file_actions_destroy(&fa);
      if (rc != 0) ADD_FAILURE() << "posix_spawn: " << rc;
      pids.push_back(rc == 0 ? pid : -1);
      logs.push_back(log);
    }
    RoundResult r;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::vector<bool> done(pids.size(), false);
    std::size_t left = pids.size();
    while (left > 0) {
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (done[i]) continue;
        int status = 0;
        if (pids[i] < 0) {
          done[i] = true;
          --left;
          ++r.failed;
          continue;
        }
        pid_t w = ::waitpid(pids[i], &status, WNOHANG);
        if (w == 0) continue;
        done[i] = true;
        --left;
        if (w == pids[i] && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
          ++r.ok;
        } else {
          ++r.failed;
          const std::string err = khub::test::slurp(logs[i]);
          r.errors.push_back(err.substr(0, err.find('\n')));
          if (r.first_error.empty())
            r.first_error = "process " + std::to_string(i) + " (exit " +
                            (WIFEXITED(status) ? std::to_string(WEXITSTATUS(status)) : "signal") + "): " +
                            khub::test::slurp(logs[i]);
        }
      }
      if (left == 0) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        for (std::size_t i = 0; i < pids.size(); ++i)
          if (!done[i]) {
            // KHUB_RACE_GDB=1: where the process was stuck (its threads' stacks), before it is killed.
            if (std::getenv("KHUB_RACE_GDB") && r.first_error.empty())
              r.first_error = khub::test::run_shell("gdb -batch -p " + std::to_string(pids[i]) +
                                                    " -ex 'thread apply all bt' 2>&1 | grep -E '^(Thread|#)'").out;
            ::kill(pids[i], SIGKILL);
            ::waitpid(pids[i], nullptr, 0);
            done[i] = true;
            ++r.failed;
            r.errors.push_back("timed out");
            if (r.first_error.empty()) r.first_error = "process " + std::to_string(i) + " timed out";
          }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return r;
  }

  // The cache after a round: no temp names anywhere in the snapshot, every file resolves.
  void expect_whole(const fs::path& cache) {
    const fs::path snap = cache / "kernels--org--relu" / "snapshots" / commit_;
    int files = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(snap, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      const std::string name = it->path().filename().string();
      EXPECT_FALSE(name.ends_with(".tmp") || name.ends_with(".incomplete")) << it->path();
      if (it->is_symlink(ec) || it->is_regular_file(ec)) {
        EXPECT_TRUE(fs::is_regular_file(it->path(), ec)) << "dangling: " << it->path();
        ++files;
      }
    }
    EXPECT_EQ(files, 28) << snap;  // the variant's 27 files and metadata.json
  }

  FixtureHub hub_;
  TempDir work_;
  fs::path host_;
  std::string commit_;
};

TEST_F(CacheRaceTest, ConcurrentDownloadsColdAndWarmAllSucceed) {
  int rounds = 2;
  if (const char* r = std::getenv("KHUB_RACE_ROUNDS"); r && std::atoi(r) > 0) rounds = std::atoi(r);
  int ok = 0, failed = 0;
  std::string first_error;
  std::map<std::string, int> kinds;  // failures by the first 80 characters of their first line
  const auto started = std::chrono::steady_clock::now();
  for (int round_no = 0; round_no < rounds; ++round_no) {
    for (int n : {8, 32}) {
      const fs::path cache = work_.path() / ("cache-" + std::to_string(round_no) + "-" + std::to_string(n));
      for (const char* phase : {"cold", "warm"}) {
        auto r = round(n, cache, std::chrono::seconds(60));
        ok += r.ok;
        failed += r.failed;
        for (const auto& e : r.errors) ++kinds[e.substr(0, 80)];
        if (r.failed > 0 && first_error.empty())
          first_error = std::string(phase) + " round of " + std::to_string(n) + ": " + r.first_error;
        expect_whole(cache);
      }
    }
  }
  // Copy mode (no symlinks: new blobs move into the snapshot, files are copies), 8 processes.
  const fs::path copies = work_.path() / "cache-copies";
  for (const char* phase : {"cold", "warm"}) {
    auto r = round(8, copies, std::chrono::seconds(60), "HF_HUB_DISABLE_SYMLINKS=1");
    ok += r.ok;
    failed += r.failed;
    for (const auto& e : r.errors) ++kinds[e.substr(0, 80)];
    if (r.failed > 0 && first_error.empty()) first_error = std::string(phase) + " copy-mode round: " + r.first_error;
    expect_whole(copies);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "[cache race] " << ok << "/" << (ok + failed) << " process runs succeeded in " << secs << " s\n";
  for (const auto& [k, n] : kinds) std::cout << "  " << n << "x " << k << "\n";
  EXPECT_EQ(failed, 0) << first_error;
}

// Temp names inside a snapshot (made there by older khub versions) are what other processes' digest
// checks tripped on. A leftover of a dead process, over a minute old, is removed and the check
// passes; one of a live process that stays is reported as such, never as "the bad file was
// removed" (nothing was).
TEST_F(CacheRaceTest, DigestCheckToleratesTempNamesAndSaysWhatItDid) {
  using namespace khub::hub;
  const fs::path cache = work_.path() / "cache";
  auto options = khub::test::fixture_options(hub_, cache);
  khub::variants::HostInfo host;
  host.torch = khub::variants::Version{2, 12};
  host.cxx11_abi = true;
  host.backend = khub::variants::Backend{khub::variants::BackendKind::Cuda, khub::variants::Version{13, 0}};
  KernelRequest request;
  request.repo_id = "org/relu";
  request.options.version = 1;
  {
    HubClient client(options);
    auto k = fetch_kernel(client, host, request);
    ASSERT_TRUE(k) << k.error().describe();
  }
  const fs::path dir = cache / "kernels--org--relu" / "snapshots" / commit_ / "build" / kVariant;
  // No temp name was left in the snapshot, and pointers were staged outside it.
  for (const auto& e : fs::recursive_directory_iterator(dir))
    EXPECT_EQ(khub::temp_name_pid(e.path().filename().string()), 0) << e.path();

  // A dead writer's leftover pointer (pid 0x7ffffffe is above pid_max), an hour old: removed.
  const fs::path leftover = dir / "layers" / "l1.py.2147483646.0123abcd.tmp";
  fs::create_symlink(fs::read_symlink(dir / "layers" / "l1.py"), leftover);
  struct timespec old[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, leftover.c_str(), old, AT_SYMLINK_NOFOLLOW), 0);
  {
    HubClient client(options);
    auto k = fetch_kernel(client, host, request);
    ASSERT_TRUE(k) << k.error().describe();
    EXPECT_TRUE(k->verified);
  }
  EXPECT_FALSE(fs::exists(fs::symlink_status(leftover)));

  // A live process's temp name that does not go away: an error that names it and removes nothing.
  const fs::path live = dir / "layers" / ("l1.py." + std::to_string(::getpid()) + ".0123abcd.tmp");
  fs::create_symlink(fs::read_symlink(dir / "layers" / "l1.py"), live);
  {
    HubClient client(options);
    auto k = fetch_kernel(client, host, request);
    ASSERT_FALSE(k);
    EXPECT_EQ(k.error().code, khub::ErrorCode::Integrity);
    EXPECT_EQ(k.error().hint.find("removed from the cache"), std::string::npos) << k.error().describe();
    EXPECT_NE(k.error().hint.find("temporary file of another khub process"), std::string::npos)
        << k.error().describe();
  }
  EXPECT_TRUE(fs::exists(fs::symlink_status(live)));
  EXPECT_TRUE(fs::is_regular_file(dir / "layers" / "l1.py"));
}

}  // namespace
