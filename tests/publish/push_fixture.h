#pragma once
// khub push against the local Hub server (khub::localhub) in process on 127.0.0.1, port 0.
#include <sys/wait.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <mutex>

#include "build_fixture.h"
#include "khub/localhub/server.h"
#include "khub/publish/hash_build.h"
#include "khub/publish/push.h"

namespace khub::testing {

/// Counts requests and content bytes, delegating to libcurl; thread-safe (Xet sends xorbs from
/// several threads). It can hide the server's Xet offer or its global dedup by renaming those
/// routes, so that the real server answers 404 as a Hub without them does.
class CountingTransport : public http::Transport {
 public:
  Expected<http::Response> perform(const http::Request& r) override {
    http::Request sent = r;
    if (hide_xet) rename(sent.url, "/xet-write-token/", "/xet-write-token-hidden/");
    if (hide_global_dedup) rename(sent.url, "/v1/chunks/", "/v1/chunks-hidden/");
    {
      std::lock_guard lock(mutex_);
      ++requests;
      if (r.method == "PUT") put_bytes += r.file ? r.file->length : r.body_bytes().size();
      if (r.method == "PUT" && r.file) ++puts;
      if (r.method == "POST" && r.url.find("/v1/xorbs/") != std::string::npos) xorb_bytes += r.body_bytes().size();
      log.push_back(r.method + " " + r.url.substr(0, r.url.find('?')));
      std::string auth;
      for (const auto& [k, v] : r.headers)
        if (k == "Authorization") auth = v;
      authorization.push_back(auth);
    }
    auto answer = inner_->perform(sent);
    bool ranged = false, authorized = false;
    for (const auto& h : r.headers) {
      ranged = ranged || h.first == "Range";
      authorized = authorized || h.first == "Authorization";
    }
    if (answer && ranged && !authorized) {
      std::lock_guard lock(mutex_);
      range_bytes += answer->body.size();
    }
    return answer;
  }
  /// Requests whose URL contains `part`.
  [[nodiscard]] int count(const std::string& part) const {
    int n = 0;
    for (const auto& line : log) n += line.find(part) != std::string::npos;
    return n;
  }
  int requests = 0;
  int puts = 0;
  std::uint64_t put_bytes = 0;
  std::uint64_t xorb_bytes = 0;
  std::uint64_t range_bytes = 0;  // bodies of range reads without Authorization (xorb fetch URLs)
  std::vector<std::string> log;
  std::vector<std::string> authorization;  // per request of `log`, "" when none
  bool hide_xet = false;
  bool hide_global_dedup = false;

 private:
  static void rename(std::string& url, const std::string& from, const std::string& to) {
    if (auto at = url.find(from); at != std::string::npos) url.replace(at, from.size(), to);
  }
  std::mutex mutex_;
  std::unique_ptr<http::Transport> inner_ = http::make_curl_transport();
};

class PushFixture : public BuildFixture {
 protected:
  static constexpr const char* kToken = "hf_khub_push_test";
  static constexpr const char* kRepo = "khub-test/relu";

  void SetUp() override {
    BuildFixture::SetUp();
    localhub::ServerOptions so;
    so.root = root_ / "hub";
    so.threads = 8;
    so.config = config();
    server_ = std::make_unique<localhub::Server>(std::move(so));
    auto st = server_->start();
    ASSERT_TRUE(st) << st.error().message;
  }
  /// The server's configuration: one write token for khub-test, 64 KiB multipart parts.
  virtual localhub::ServerConfig config() const {
    localhub::ServerConfig c;
    c.tokens.push_back({kToken, "tester", true, {"khub-test"}, {}});
    c.lfs_chunk_size = 64 * 1024;  // objects above 64 KiB go multipart
    return c;
  }

  void TearDown() override {
    if (server_) server_->stop();
    BuildFixture::TearDown();
  }

  publish::PushOptions options() const {
    publish::PushOptions o;
    o.endpoint = server_->url();
    o.token = kToken;
    o.repo_id = kRepo;
    o.retry.base = std::chrono::milliseconds(1);
    return o;
  }

  Expected<publish::PushResult> push(const publish::PushOptions& o) { return push(o, kernel()); }
  Expected<publish::PushResult> push(const publish::PushOptions& o, const std::filesystem::path& dir) {
    auto tree = publish::discover_build(dir);
    if (!tree) return std::move(tree).error();
    return publish::push_build(*tree, o, transport_);
  }

  /// Hashes every variant (metadata digest) after the files are in place.
  void hash_all() {
    auto tree = publish::discover_build(build());
    ASSERT_TRUE(tree);
    auto st = publish::write_digests(*tree);
    ASSERT_TRUE(st) << st.error().message;
  }

  /// Files on `rev` of the test repo: path → sha256.
  std::map<std::string, std::string> files_on(const std::string& rev, const std::string& repo_id = "khub-test/relu") {
    auto& store = server_->store();
    const auto slash = repo_id.find('/');
    auto repo = store.find_repo({localhub::RepoType::Kernel, repo_id.substr(0, slash), repo_id.substr(slash + 1)});
    EXPECT_TRUE(repo);
    auto commit = store.resolve_revision(*repo, rev);
    EXPECT_TRUE(commit) << rev;
    std::map<std::string, std::string> out;
    if (!commit) return out;
    auto files = store.list_files(*repo, *commit);
    EXPECT_TRUE(files);
    if (!files) return out;
    for (const auto& f : files.value()) out[f.path] = f.sha256;
    return out;
  }

  std::vector<std::string> summaries(const std::string& rev) {
    auto& store = server_->store();
    auto repo = store.find_repo({localhub::RepoType::Kernel, "khub-test", "relu"});
    auto commit = store.resolve_revision(*repo, rev);
    std::vector<std::string> out;
    auto history = store.history(*repo, *commit);
    EXPECT_TRUE(history);
    if (!history) return out;
    for (const auto& c : history.value()) out.push_back(c.summary);
    return out;
  }

  struct CliRun {
    int code = -1;
    std::string out;  // stdout; stderr goes to root_/stderr.txt
  };
  /// `khub ARGS` as a process against the server, with HF_TOKEN=token and HF_HOME in the test folder.
  CliRun run_khub(const std::string& args, const std::string& token = kToken) {
    std::string cmd = "HF_ENDPOINT=" + server_->url() + " HF_TOKEN=" + token + " HF_HOME=" + root_.string() +
                      " " + KHUB_KHUB_EXE + " " + args + " 2>" + (root_ / "stderr.txt").string();
    CliRun r;
    FILE* p = ::popen(cmd.c_str(), "r");
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    int st = ::pclose(p);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
  }

  std::unique_ptr<localhub::Server> server_;
  CountingTransport transport_;
};

}  // namespace khub::testing
