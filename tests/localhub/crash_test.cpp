// kill -9 during commits and uploads: the store reopens with the last committed state intact,
// every ref points at a complete commit and every blob matches its hash.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "test_support.h"

namespace khub::localhub::testing {
namespace {

const RepoKey kRepo{RepoType::Kernel, "acme", "relu"};

CommitOp add(RepoStore& store, const std::string& path, const std::string& content) {
  auto info = store.blobs().put(content);
  EXPECT_TRUE(info);
  return CommitOp{OpKind::AddFile, path, info->sha256, info->size, false};
}

// Every ref of `key` resolves to a commit whose files all have intact blobs; SQLite agrees.
void expect_consistent(const std::filesystem::path& root, const RepoKey& key) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((root / "hub.sqlite3").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);

  auto store = RepoStore::open(root);
  ASSERT_TRUE(store) << store.error().message;
  auto repo = (*store)->find_repo(key);
  ASSERT_TRUE(repo);
  auto refs = (*store)->list_refs(*repo);
  ASSERT_TRUE(refs);
  for (const auto& ref : *refs) {
    ASSERT_TRUE((*store)->history(*repo, ref.commit)) << ref.name;
    auto files = (*store)->list_files(*repo, ref.commit);
    ASSERT_TRUE(files);
    for (const auto& f : *files) {
      auto digest = hash_file((*store)->blobs().path_of(f.sha256), HashAlgorithm::Sha256);
      ASSERT_TRUE(digest) << f.path << " blob missing";
      EXPECT_EQ(to_hex(*digest), f.sha256) << f.path;
      EXPECT_EQ(*(*store)->blobs().size_of(f.sha256), f.size) << f.path;
    }
  }
  EXPECT_TRUE(std::filesystem::is_empty((*store)->blobs().tmp_dir()));
}

// Commits A, then kills a child process at `stage` of commit B; the store must still show A.
void kill_mid_commit(const std::string& stage) {
  TempDir dir("crash");
  std::string head_a;
  {
    auto store = RepoStore::open(dir.path);
    ASSERT_TRUE(store);
    auto repo = (*store)->create_repo(kRepo, false);
    ASSERT_TRUE(repo);
    auto a = (*store)->commit(*repo, "main", {"A", "", "", {add(**store, "a.txt", "version A")}});
    ASSERT_TRUE(a);
    head_a = a->oid;
  }
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StoreOptions options;
    options.test_hook = [stage](std::string_view s) {
      if (s == stage) kill(getpid(), SIGKILL);
    };
    auto store = RepoStore::open(dir.path, options);
    if (!store) _exit(3);
    auto repo = (*store)->find_repo(kRepo);
    if (!repo) _exit(4);
    std::string big(3 << 20, 'x');
    (void)(*store)->commit(*repo, "main", {"B", "", "", {add(**store, "a.txt", "version B"), add(**store, "big.txt", big),
                                                        CommitOp{OpKind::DeleteFile, ".gitattributes"}}});
    _exit(5);  // the hook did not fire
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  expect_consistent(dir.path, kRepo);
  auto store = RepoStore::open(dir.path);
  auto repo = (*store)->find_repo(kRepo);
  EXPECT_EQ(*(*store)->resolve_revision(*repo, "main"), head_a);
  auto a = (*store)->find_file(*repo, head_a, "a.txt");
  ASSERT_TRUE(a && *a);
  EXPECT_EQ(*(*store)->blobs().read((*a)->sha256), "version A");
  EXPECT_TRUE(*(*store)->find_file(*repo, head_a, ".gitattributes"));
  // The store keeps working after the crash.
  auto c = (*store)->commit(*repo, "main", {"C", "", head_a, {add(**store, "c.txt", "C")}});
  ASSERT_TRUE(c) << c.error().message;
}

TEST(CrashTest, KillInsideCommitTransactionKeepsPreviousState) { kill_mid_commit("in-transaction"); }

TEST(CrashTest, KillAfterBlobsBeforeTransactionKeepsPreviousState) { kill_mid_commit("blobs-written"); }

TEST(CrashTest, KillServerDuringUploadsAndCommits) {
  TempDir dir("crash-server");
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipefd[0]);
    ServerOptions o;
    o.root = dir.path;
    o.threads = 8;
    Server server(std::move(o));
    if (!server.start()) _exit(3);
    int port = server.port();
    (void)!write(pipefd[1], &port, sizeof port);
    for (;;) pause();
  }
  close(pipefd[1]);
  int port = 0;
  ASSERT_EQ(read(pipefd[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  close(pipefd[0]);

  httplib::Client setup("127.0.0.1", port);
  ASSERT_EQ(setup.Post("/api/repos/create", R"({"name":"relu","organization":"acme","type":"kernel"})",
                       "application/json")->status, 200);
  std::atomic<bool> stop{false};
  std::atomic<int> commits{0};
  auto committer = [&](int id) {
    httplib::Client c("127.0.0.1", port);
    for (int i = 0; !stop; ++i) {
      std::string body = R"({"key":"header","value":{"summary":"w"}})" "\n";
      body += nlohmann::json{{"key", "file"}, {"value", {{"path", "w" + std::to_string(id) + "/" + std::to_string(i % 7)},
                                                           {"content", b64(std::string(20000 + i, 'c'))},
                                                           {"encoding", "base64"}}}}.dump() + "\n";
      auto r = c.Post("/api/kernels/acme/relu/commit/main", body, "application/x-ndjson");
      if (!r) break;
      if (r->status == 200) ++commits;
    }
  };
  auto uploader = [&] {
    httplib::Client c("127.0.0.1", port);
    std::string data(8 << 20, 'u');
    for (int i = 0; !stop; ++i) {
      data[0] = static_cast<char>(i);
      nlohmann::json batch{{"operation", "upload"}, {"transfers", {"basic"}},
                           {"objects", {{{"oid", sha256_hex(data)}, {"size", data.size()}}}}};
      auto r = c.Post("/kernels/acme/relu.git/info/lfs/objects/batch", batch.dump(), "application/json");
      if (!r) break;
      auto href = nlohmann::json::parse(r->body)["objects"][0]["actions"]["upload"]["href"].get<std::string>();
      if (!c.Put(href.substr(href.find('/', 7)), data, "application/octet-stream")) break;
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) threads.emplace_back(committer, i);
  threads.emplace_back(uploader);
  while (commits < 5) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_TRUE(WIFSIGNALED(status));
  expect_consistent(dir.path, kRepo);
}

}  // namespace
}  // namespace khub::localhub::testing
