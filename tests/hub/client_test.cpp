// HubClient against a real loopback server: API calls, pagination, error codes, retries, 429.
#include <gtest/gtest.h>

#include <chrono>

#include "../http/hostile_server.h"
#include "fixture_hub.h"
#include "khub/hub/hub_client.h"
#include "test_util.h"

namespace {
using namespace khub;
using namespace khub::hub;
using khub::test::FixtureHub;
using khub::test::TempDir;

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    commit_ = hub_.commit("org/relu", "v1", test::sample_variant_files("torch212-cxx11-cu130-x86_64-linux", "_relu_cuda_abc1234"));
    hub_.set_trusted("org", true);
  }
  HubClient client() { return HubClient(test::fixture_options(hub_, dir_.path())); }
  FixtureHub hub_;
  TempDir dir_;
  std::string commit_;
  RepoRef repo_{RepoType::Kernel, "org/relu"};
};

TEST_F(ClientTest, RevisionRefsTrust) {
  auto c = client();
  EXPECT_EQ(*c.revision_commit(repo_, "v1"), commit_);
  auto refs = c.list_refs(repo_);
  ASSERT_TRUE(refs) << refs.error().describe();
  ASSERT_EQ(refs->branches.size(), 2u);
  EXPECT_EQ(refs->branches[0].name, "v1");
  EXPECT_EQ(refs->branches[0].target_commit, commit_);
  EXPECT_TRUE(*c.is_trusted_publisher("org"));
  auto n = hub_.requests().size();
  EXPECT_TRUE(*c.is_trusted_publisher("org"));  // memoised
  EXPECT_EQ(hub_.requests().size(), n);
  EXPECT_FALSE(c.is_trusted_publisher("someone"));  // user namespaces answer 404
}

TEST_F(ClientTest, TreeRecursiveAndPaginated) {
  test::Faults f;
  f.page_size = 2;
  hub_.set_faults(f);
  auto c = client();
  auto tree = c.list_tree(repo_, commit_, "build/torch212-cxx11-cu130-x86_64-linux", true);
  ASSERT_TRUE(tree) << tree.error().describe();
  int files = 0, dirs = 0;
  for (const auto& e : *tree) (e.directory ? dirs : files)++;
  EXPECT_EQ(files, 5);
  EXPECT_EQ(dirs, 1);
  auto so = std::find_if(tree->begin(), tree->end(), [](const TreeEntry& e) { return e.path.ends_with(".so"); });
  ASSERT_NE(so, tree->end());
  EXPECT_EQ(so->etag().size(), 64u);
  EXPECT_EQ(so->size, 4096u);
  auto top = c.list_tree(repo_, commit_, "build", false);
  ASSERT_TRUE(top);
  ASSERT_EQ(top->size(), 1u);
  EXPECT_TRUE((*top)[0].directory);
}

TEST_F(ClientTest, ErrorCodes) {
  auto c = client();
  auto missing_repo = c.list_refs(RepoRef{RepoType::Kernel, "org/nope"});
  ASSERT_FALSE(missing_repo);
  EXPECT_EQ(missing_repo.error().code, ErrorCode::RepoNotFound);
  EXPECT_NE(missing_repo.error().message.find("request id req-fixture"), std::string::npos);
  EXPECT_EQ(missing_repo.error().http_status, 404);
  EXPECT_EQ(c.revision_commit(repo_, "v9").error().code, ErrorCode::RevisionNotFound);
  EXPECT_EQ(c.list_tree(repo_, commit_, "nothing/here").error().code, ErrorCode::EntryNotFound);
  auto head = c.file_metadata(repo_, commit_, "absent.txt");
  ASSERT_TRUE(head);
  EXPECT_FALSE(head->exists);
  EXPECT_EQ(head->commit, commit_);
  // Wrong type: a kernel repo asked as a model.
  EXPECT_EQ(c.list_refs(RepoRef{RepoType::Model, "org/relu"}).error().code, ErrorCode::RepoNotFound);
  hub_.set_gated("org/relu", true);
  EXPECT_EQ(c.file_metadata(repo_, commit_, "build/torch212-cxx11-cu130-x86_64-linux/__init__.py").error().code,
            ErrorCode::GatedRepo);
  hub_.set_gated("org/relu", false);
  hub_.require_token("hf_secret_token");
  auto anonymous = c.list_refs(repo_);
  EXPECT_EQ(anonymous.error().code, ErrorCode::RepoNotFound);  // private: 401 on a repo URL
  auto opts = test::fixture_options(hub_, dir_.path());
  opts.token = "hf_secret_token";
  HubClient authed(opts);
  EXPECT_TRUE(authed.list_refs(repo_));
}

TEST_F(ClientTest, BadServerAnswers) {
  test::Faults f;
  f.garbage_json = true;
  hub_.set_faults(f);
  auto c = client();
  auto r = c.list_refs(repo_);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::Protocol);
  test::Faults esc;
  esc.escape_path = true;
  hub_.set_faults(esc);
  auto t = c.list_tree(repo_, commit_, "build", true);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::Protocol);
  EXPECT_NE(t.error().message.find("escaping the repo"), std::string::npos);
}

TEST_F(ClientTest, RetriesServerErrorsThenSucceeds) {
  test::Faults f;
  f.fail_count = 3;
  f.fail_status = 503;
  hub_.set_faults(f);
  // The progress sink hears of each retry before its wait (the CLI prints a line for it).
  struct Retries : ProgressSink {
    std::vector<std::string> lines;
    void on_retry(std::string_view what, int attempt, int of, std::chrono::milliseconds) override {
      lines.push_back(std::string(what) + " " + std::to_string(attempt) + "/" + std::to_string(of));
    }
  };
  auto sink = std::make_shared<Retries>();
  auto o = test::fixture_options(hub_, dir_.path());
  o.progress = sink;
  HubClient c(o);
  EXPECT_TRUE(c.list_refs(repo_));
  EXPECT_EQ(hub_.requests().size(), 4u);
  ASSERT_EQ(sink->lines.size(), 3u);
  EXPECT_EQ(sink->lines[0], "GET " + hub_.endpoint() + "/api/kernels/org/relu/refs: HTTP 503 1/5");
  EXPECT_EQ(sink->lines[2].substr(sink->lines[2].size() - 3), "3/5");
}

TEST_F(ClientTest, GivesUpAfterRetries) {
  test::Faults f;
  f.fail_count = 100;
  f.fail_status = 502;
  hub_.set_faults(f);
  auto c = client();
  auto r = c.list_refs(repo_);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::Network);
  EXPECT_EQ(hub_.requests().size(), 6u);  // 1 + 5 retries
}

TEST_F(ClientTest, RateLimitHonoursHeaders) {
  test::Faults f;
  f.fail_count = 1;
  f.fail_status = 429;
  f.rate_limit = "\"api\";r=0;t=0";
  hub_.set_faults(f);
  auto opts = test::fixture_options(hub_, dir_.path());
  opts.retry.max_wait = std::chrono::milliseconds(5000);
  HubClient c(opts);
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.list_refs(repo_));
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(900));  // t=0 → wait t+1 s
  f.rate_limit.clear();
  f.retry_after = "100";
  f.fail_count = 10;
  hub_.set_faults(f);
  opts.retry.max_wait = std::chrono::milliseconds(20);
  opts.retry.max_retries = 2;
  HubClient capped(opts);
  auto limited = capped.list_refs(repo_);
  ASSERT_FALSE(limited);
  EXPECT_EQ(limited.error().code, ErrorCode::RateLimited);
}

TEST_F(ClientTest, NetworkErrorWhenNothingListens) {
  auto opts = test::fixture_options(hub_, dir_.path());
  opts.endpoint = "http://127.0.0.1:9";
  opts.retry.max_retries = 1;
  HubClient c(opts);
  auto r = c.list_refs(repo_);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::Network);
}

TEST_F(ClientTest, OfflineMakesNoRequest) {
  auto opts = test::fixture_options(hub_, dir_.path());
  opts.offline = true;
  HubClient c(opts);
  EXPECT_EQ(c.list_refs(repo_).error().code, ErrorCode::OfflineMiss);
  EXPECT_EQ(c.file_metadata(repo_, "v1", "x").error().code, ErrorCode::OfflineMiss);
  EXPECT_TRUE(hub_.requests().empty());
  EXPECT_EQ(c.request_count(), 0u);
}

}  // namespace

// A size no 64-bit number holds, in a HEAD's X-Linked-Size (answered directly or with a redirect to
// another host), is a Protocol error, not an uncaught std::out_of_range that ended the process
// (fuzz_hub_json found it).
TEST(FileMetadata, ASizeBeyond64BitsIsAProtocolError) {
  const std::string huge(100, '5'), commit(40, 'a'), etag(64, 'b');
  for (bool redirect : {false, true}) {
    khub::test::HostileServer server([&](khub::test::HostileServer& s, int fd, const std::string& head) {
      std::string answer = "HTTP/1.1 200 OK\r\n";
      if (redirect && head.find("/resolve/") != std::string::npos)
        answer = "HTTP/1.1 302 Found\r\nLocation: " + s.url("/cdn/f.bin") + "\r\n";
      answer += "X-Repo-Commit: " + commit + "\r\nX-Linked-Etag: \"" + etag + "\"\r\nX-Linked-Size: " + huge +
                "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      s.send(fd, answer);
    });
    TempDir dir;
    ClientOptions o;
    o.endpoint = server.url("");
    if (redirect) o.endpoint = "http://localhost:" + o.endpoint.substr(o.endpoint.rfind(':') + 1);  // the CDN: 127.0.0.1
    o.cache_dir = dir.path();
    o.telemetry = false;
    HubClient c(o);
    auto m = c.file_metadata(RepoRef{RepoType::Model, "org/m"}, commit, "f.bin");
    ASSERT_FALSE(m) << redirect;
    EXPECT_EQ(m.error().code, ErrorCode::Protocol) << m.error().describe();
  }
}
