// RepoStore: repos, refs, commits and blobs without HTTP (localhub/src/store*.cpp).
#include "khub/localhub/store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "khub/base/hash.h"
#include "sqlite_db.h"

namespace khub::localhub {
namespace {

struct TempStore {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("khub-store-old-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}()));
  TempStore() { std::filesystem::create_directories(path); }
  ~TempStore() { std::filesystem::remove_all(path); }
};

class StoreTest : public ::testing::Test {
 protected:
  std::filesystem::path root_ = std::filesystem::temp_directory_path() /
                                ("khub-store-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}()));
  std::unique_ptr<RepoStore> store_;
  RepoRecord repo_;

  void SetUp() override {
    auto s = RepoStore::open(root_);
    ASSERT_TRUE(s) << s.error().message;
    store_ = std::move(*s);
    auto r = store_->create_repo({RepoType::Kernel, "acme", "relu"}, false);
    ASSERT_TRUE(r) << r.error().message;
    repo_ = *r;
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(root_);
  }

  CommitOp add(const std::string& path, std::string_view content, bool lfs = false) {
    auto info = store_->blobs().put(content);
    EXPECT_TRUE(info);
    return CommitOp{OpKind::AddFile, path, info->sha256, info->size, lfs};
  }
};

TEST_F(StoreTest, NewRepoHasMainWithGitattributes) {
  auto main = store_->resolve_revision(repo_, "main");
  ASSERT_TRUE(main);
  EXPECT_EQ(main->size(), 40u);
  auto files = store_->list_files(repo_, *main);
  ASSERT_TRUE(files);
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].path, ".gitattributes");
  auto again = store_->create_repo({RepoType::Kernel, "acme", "relu"}, false);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::Conflict);
  // Same name, other type: a different repo.
  EXPECT_TRUE(store_->create_repo({RepoType::Model, "acme", "relu"}, false));
}

TEST_F(StoreTest, CommitAddsReplacesAndDeletes) {
  CommitRequest req{"add", "", "", {add("a.txt", "one"), add("build/x/y.so", "\x7f" "ELF", true)}};
  auto c1 = store_->commit(repo_, "main", req);
  ASSERT_TRUE(c1) << c1.error().message;
  auto files = store_->list_files(repo_, c1->oid);
  ASSERT_EQ(files->size(), 3u);
  auto so = store_->find_file(repo_, c1->oid, "build/x/y.so");
  ASSERT_TRUE(so && *so);
  EXPECT_TRUE((*so)->lfs);
  EXPECT_EQ((*so)->sha256, sha256_hex("\x7f" "ELF"));

  CommitRequest req2{"second", "", c1->oid,
                     {add("a.txt", "two"), CommitOp{OpKind::DeleteFolder, "build/"}}};
  auto c2 = store_->commit(repo_, "main", req2);
  ASSERT_TRUE(c2) << c2.error().message;
  EXPECT_EQ((*store_->find_file(repo_, c2->oid, "a.txt"))->git_oid, git_blob_sha1_hex("two"));
  EXPECT_FALSE(*store_->find_file(repo_, c2->oid, "build/x/y.so"));
  CommitOp rename{OpKind::RenameFile, "b.txt"};
  rename.from = "a.txt";
  auto c3 = store_->commit(repo_, "main", {"rename", "", "", {rename}});
  ASSERT_TRUE(c3) << c3.error().message;
  EXPECT_EQ((*store_->find_file(repo_, c3->oid, "b.txt"))->git_oid, git_blob_sha1_hex("two"));
  EXPECT_FALSE(*store_->find_file(repo_, c3->oid, "a.txt"));
  EXPECT_EQ(store_->commit(repo_, "main", {"again", "", "", {rename}}).error().code, ErrorCode::EntryNotFound);
  // The old commit is immutable.
  EXPECT_EQ((*store_->find_file(repo_, c1->oid, "a.txt"))->git_oid, git_blob_sha1_hex("one"));
  auto hist = store_->history(repo_, c2->oid);  // c2, c1, initial
  ASSERT_TRUE(hist);
  EXPECT_EQ(hist->size(), 3u);
  EXPECT_EQ((*hist)[1].oid, c1->oid);
}

TEST_F(StoreTest, StaleParentIsConflictAndChangesNothing) {
  auto before = *store_->resolve_revision(repo_, "main");
  ASSERT_TRUE(store_->commit(repo_, "main", {"one", "", "", {add("a", "1")}}));
  auto head = *store_->resolve_revision(repo_, "main");
  auto stale = store_->commit(repo_, "main", {"two", "", before, {add("b", "2")}});
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code, ErrorCode::Conflict);
  EXPECT_EQ(*store_->resolve_revision(repo_, "main"), head);
}

TEST_F(StoreTest, RejectsDanglingLfsMissingDeleteAndFileFolderClash) {
  CommitOp dangling{OpKind::AddFile, "w.bin", std::string(64, 'a'), 5, true};
  auto r1 = store_->commit(repo_, "main", {"x", "", "", {dangling}});
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.error().code, ErrorCode::Integrity);
  EXPECT_NE(r1.error().message.find("LFS pointer pointed to a file that does not exist"), std::string::npos);

  auto r2 = store_->commit(repo_, "main", {"x", "", "", {CommitOp{OpKind::DeleteFile, "nope"}}});
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code, ErrorCode::EntryNotFound);

  auto r3 = store_->commit(repo_, "main", {"x", "", "", {add("a", "1"), add("a/b", "2")}});
  ASSERT_FALSE(r3);
  EXPECT_EQ(r3.error().code, ErrorCode::InvalidArgument);

  auto wrong_size = add("s", "12345");
  wrong_size.size = 4;
  auto r4 = store_->commit(repo_, "main", {"x", "", "", {wrong_size}});
  ASSERT_FALSE(r4);
  EXPECT_EQ(r4.error().code, ErrorCode::Integrity);
  EXPECT_EQ(store_->history(repo_, *store_->resolve_revision(repo_, "main"))->size(), 1u);
}

TEST_F(StoreTest, RefsBranchesTagsAndPullRequests) {
  auto main = *store_->resolve_revision(repo_, "main");
  ASSERT_TRUE(store_->create_ref(repo_, RefKind::Branch, "v1", main));
  EXPECT_EQ(store_->create_ref(repo_, RefKind::Branch, "v1", main).error().code, ErrorCode::Conflict);
  ASSERT_TRUE(store_->create_ref(repo_, RefKind::Tag, "t1", main));
  EXPECT_EQ(*store_->resolve_revision(repo_, "refs/tags/t1"), main);
  EXPECT_EQ(*store_->resolve_revision(repo_, "refs/heads/v1"), main);
  EXPECT_EQ(*store_->resolve_revision(repo_, main), main);
  EXPECT_EQ(store_->resolve_revision(repo_, "v9").error().code, ErrorCode::RevisionNotFound);
  EXPECT_EQ(store_->resolve_revision(repo_, std::string(40, 'f')).error().code, ErrorCode::RevisionNotFound);

  CommitRequest pr{"pr", "", "", {add("p.txt", "p")}, true};
  auto c = store_->commit(repo_, "v1", pr);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->pr_number, 1);
  EXPECT_EQ(*store_->resolve_revision(repo_, "refs/pr/1"), c->oid);
  EXPECT_EQ(*store_->resolve_revision(repo_, "v1"), main);  // the target branch is unchanged
  EXPECT_EQ(store_->delete_ref(repo_, RefKind::Branch, "main").error().code, ErrorCode::InvalidArgument);
  EXPECT_TRUE(store_->delete_ref(repo_, RefKind::Branch, "v1"));
  EXPECT_EQ(store_->delete_ref(repo_, RefKind::Branch, "v1").error().code, ErrorCode::RevisionNotFound);
}

// A store made before commits had an author opens: the column is added, old commits read as khub.
TEST(StoreMigration, AddsTheAuthorColumnToAnOlderStore) {
  TempStore dir;
  {
    auto pool = db::Pool::open(dir.path / "hub.sqlite3");
    ASSERT_TRUE(pool);
    auto conn = (*pool)->acquire();
    ASSERT_TRUE(conn);
    ASSERT_TRUE((*conn)->exec(
        "CREATE TABLE repos(id INTEGER PRIMARY KEY, type TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL, "
        "private INTEGER NOT NULL, created_at INTEGER NOT NULL, next_pr INTEGER NOT NULL DEFAULT 1, "
        "gated TEXT NOT NULL DEFAULT '', UNIQUE(type, ns, name));"
        "CREATE TABLE commits(repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE, oid TEXT NOT NULL, "
        "tree_oid TEXT NOT NULL, parent TEXT NOT NULL, summary TEXT NOT NULL, description TEXT NOT NULL, "
        "created_at INTEGER NOT NULL, PRIMARY KEY(repo_id, oid));"));
  }
  auto store = RepoStore::open(dir.path);
  ASSERT_TRUE(store) << store.error().message;
  auto repo = (*store)->create_repo({RepoType::Model, "acme", "old"}, false);
  ASSERT_TRUE(repo) << repo.error().message;
  auto blob = (*store)->blobs().put("x");
  ASSERT_TRUE(blob);
  CommitRequest req{"add", "", "", {CommitOp{OpKind::AddFile, "x.txt", blob->sha256, blob->size, false}}};
  req.author = "alice";
  auto c = (*store)->commit(*repo, "main", req);
  ASSERT_TRUE(c) << c.error().message;
  auto history = (*store)->history(*repo, c->oid);
  ASSERT_TRUE(history);
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].author, "alice");
  EXPECT_EQ((*history)[1].author, "khub");
}

TEST_F(StoreTest, BlobWriterChecksHashAndSizeAndSurvivesReopen) {
  auto w = store_->blobs().begin();
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->write("hello"));
  auto bad = w->commit(std::string(64, '0'));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::Integrity);
  EXPECT_FALSE(store_->blobs().contains(sha256_hex("hello")));

  ASSERT_TRUE(store_->commit(repo_, "main", {"keep", "", "", {add("k.txt", "kept")}}));
  auto head = *store_->resolve_revision(repo_, "main");
  store_.reset();
  auto reopened = RepoStore::open(root_);
  ASSERT_TRUE(reopened);
  auto repo = (*reopened)->find_repo({RepoType::Kernel, "acme", "relu"});
  ASSERT_TRUE(repo);
  EXPECT_EQ(*(*reopened)->resolve_revision(*repo, "main"), head);
  EXPECT_EQ(*(*reopened)->blobs().read(sha256_hex("kept")), "kept");
  EXPECT_TRUE((*reopened)->delete_repo({RepoType::Kernel, "acme", "relu"}));
  EXPECT_EQ((*reopened)->find_repo({RepoType::Kernel, "acme", "relu"}).error().code, ErrorCode::RepoNotFound);
}

}  // namespace
}  // namespace khub::localhub
