// RepoStore::collect_garbage (localhub/src/store_gc.cpp): what deleted repos and abandoned uploads
// leave is removed, nothing a commit reaches is, and a commit racing a collection never lands on a
// deleted blob.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "khub/localhub/store.h"

namespace khub::localhub {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

class GcTest : public ::testing::Test {
 protected:
  fs::path root_ = fs::temp_directory_path() /
                   ("khub-gc-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}()));
  std::function<void(std::string_view)> hook_;
  std::unique_ptr<RepoStore> store_;

  void SetUp() override {
    StoreOptions options;
    options.test_hook = [this](std::string_view stage) {
      if (hook_) hook_(stage);
    };
    auto s = RepoStore::open(root_, std::move(options));
    ASSERT_TRUE(s) << s.error().message;
    store_ = std::move(*s);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(root_);
  }

  RepoRecord repo(const std::string& name) {
    auto r = store_->create_repo({RepoType::Kernel, "acme", name}, false);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : RepoRecord{};
  }
  CommitOp add(const std::string& path, std::string_view content) {
    auto info = store_->blobs().put(content);
    EXPECT_TRUE(info);
    return CommitOp{OpKind::AddFile, path, info->sha256, info->size, true};
  }
  // Makes a blob look as if it was last uploaded two hours ago.
  void age(const std::string& sha256) {
    fs::last_write_time(store_->blobs().path_of(sha256), fs::file_time_type::clock::now() - 2h);
  }
  GcReport collect(std::chrono::seconds grace = 3600s, bool dry_run = false) {
    auto r = store_->collect_garbage({grace, dry_run});
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : GcReport{};
  }
};

TEST_F(GcTest, RemovesWhatADeletedRepoLeftAndNothingElse) {
  auto gone = repo("gone");
  auto kept = repo("kept");
  auto only_gone = add("w.bin", std::string(1000, 'g'));
  auto shared = add("s.bin", "shared by both repos");
  ASSERT_TRUE(store_->commit(gone, "main", {"add", "", "", {only_gone, shared}}));
  auto kept_commit = store_->commit(kept, "main", {"add", "", "", {add("s.bin", "shared by both repos")}});
  ASSERT_TRUE(kept_commit);
  age(only_gone.sha256);
  ASSERT_TRUE(store_->delete_repo(gone.key));

  auto dry = collect(0s, true);
  EXPECT_EQ(dry.trees_removed, 1u);
  EXPECT_EQ(dry.blobs_removed, 1u);
  EXPECT_TRUE(store_->blobs().contains(only_gone.sha256)) << "a dry run deletes nothing";

  auto report = collect();  // the blob is two hours old: past the default grace of an hour
  EXPECT_EQ(report.trees_removed, 1u);
  EXPECT_EQ(report.blobs_removed, 1u);
  EXPECT_EQ(report.bytes_removed, 1000u);
  EXPECT_EQ(report.blobs_kept, 2u);  // .gitattributes and s.bin
  EXPECT_FALSE(store_->blobs().contains(only_gone.sha256));
  EXPECT_TRUE(store_->blobs().contains(shared.sha256));
  auto files = store_->list_files(kept, kept_commit->oid);
  ASSERT_TRUE(files);
  EXPECT_EQ(files->size(), 2u);

  auto again = collect(0s);
  EXPECT_EQ(again.trees_removed + again.blobs_removed + again.uploads_removed, 0u);
}

TEST_F(GcTest, KeepsYoungBlobsAndOnesOfferedAgain) {
  auto young = store_->blobs().put("uploaded a moment ago, its commit not yet here");
  auto offered = store_->blobs().put("old, then uploaded again");
  ASSERT_TRUE(young && offered);
  age(offered->sha256);
  ASSERT_TRUE(store_->blobs().put("old, then uploaded again"));  // dedup refreshes the blob's age
  auto report = collect();
  EXPECT_EQ(report.blobs_kept_young, 2u);
  EXPECT_EQ(report.blobs_removed, 0u);
  age(young->sha256);
  store_->blobs().touch(young->sha256);  // what an LFS batch answer "already stored" does
  EXPECT_EQ(collect().blobs_kept_young, 2u);
  EXPECT_EQ(collect(0s).blobs_removed, 2u);
}

TEST_F(GcTest, RemovesAbandonedUploadsOnly) {
  auto stale = store_->blobs().upload_dir() / std::string(64, 'a');
  auto fresh = store_->blobs().upload_dir() / std::string(64, 'b');
  for (const auto& dir : {stale, fresh}) {
    fs::create_directories(dir);
    std::ofstream(dir / "1.part") << "part";
  }
  for (const auto& p : {stale, stale / "1.part"}) fs::last_write_time(p, fs::file_time_type::clock::now() - 2h);
  auto report = collect();
  EXPECT_EQ(report.uploads_removed, 1u);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh / "1.part"));
}

// The commit saw its blob before taking the write lock; a collection deletes the blob in between.
// The commit must fail cleanly instead of landing a tree that points at nothing.
TEST_F(GcTest, CommitRacingACollectionNeverReferencesADeletedBlob) {
  auto r = repo("race");
  auto head = store_->resolve_revision(r, "main");
  ASSERT_TRUE(head);
  auto op = add("late.bin", "an orphan the client reuses");
  age(op.sha256);
  hook_ = [&](std::string_view stage) {
    if (stage != "blobs-written") return;
    hook_ = nullptr;
    EXPECT_EQ(collect(0s).blobs_removed, 1u);
  };
  auto c = store_->commit(r, "main", {"add", "", "", {op}});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ErrorCode::Integrity);
  EXPECT_NE(c.error().message.find("upload it again"), std::string::npos) << c.error().message;
  EXPECT_EQ(*store_->resolve_revision(r, "main"), *head);

  // Uploaded again, the same commit goes through, and a collection now keeps the blob.
  auto again = store_->commit(r, "main", {"add", "", "", {add("late.bin", "an orphan the client reuses")}});
  ASSERT_TRUE(again) << again.error().message;
  age(op.sha256);
  EXPECT_EQ(collect(0s).blobs_removed, 0u);
  EXPECT_TRUE(store_->blobs().contains(op.sha256));
}

}  // namespace
}  // namespace khub::localhub
