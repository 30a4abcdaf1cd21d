// Cache paths and the ref / pointer I/O (docs/protocol.md, Cache layout).
#include <gtest/gtest.h>

#include <fstream>

#include "khub/base/fs.h"
#include "khub/hub/cache.h"

namespace {
using namespace khub::hub;
namespace fs = std::filesystem;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

TEST(CacheLayout, Paths) {
  CacheLayout c("/c");
  RepoRef r{RepoType::Kernel, "org/relu"};
  EXPECT_EQ(c.blob(r, "abc"), "/c/kernels--org--relu/blobs/abc");
  EXPECT_EQ(c.snapshot_file(r, kCommit, "build/v/x.so"), "/c/kernels--org--relu/snapshots/" + kCommit + "/build/v/x.so");
  EXPECT_EQ(c.ref_file(r, "refs/pr/1"), "/c/kernels--org--relu/refs/refs/pr/1");
  EXPECT_EQ(c.no_exist(r, kCommit, "kernel-status.toml"),
            "/c/kernels--org--relu/.no_exist/" + kCommit + "/kernel-status.toml");
  EXPECT_EQ(c.lock_file(r, "abc"), "/c/.locks/kernels--org--relu/abc.lock");
}

TEST(CacheIo, RefsPointersVersions) {
  fs::path root = fs::temp_directory_path() / ("khub-cache-test-" + khub::random_hex8());
  CacheLayout c(root);
  RepoRef r{RepoType::Kernel, "org/relu"};
  ASSERT_TRUE(write_ref(c, r, "v1", kCommit));
  ASSERT_TRUE(write_ref(c, r, "v10", kCommit));
  EXPECT_EQ(*khub::read_file(c.ref_file(r, "v1")), kCommit);  // no trailing newline
  EXPECT_EQ(*read_ref(c, r, "v1"), kCommit);
  EXPECT_EQ(cached_versions(c, r), (std::vector<int>{1, 10}));
  EXPECT_EQ(*cached_commit(c, r, kCommit), kCommit);
  EXPECT_FALSE(cached_commit(c, r, "v2"));

  fs::create_directories(c.blob(r, "e").parent_path());
  std::ofstream(c.blob(r, "e")) << "bytes";
  ASSERT_TRUE(link_snapshot_file(c, r, kCommit, "build/v/layers/x.py", "e", false));
  fs::path link = c.snapshot_file(r, kCommit, "build/v/layers/x.py");
  ASSERT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), "../../../../../blobs/e");
  EXPECT_EQ(*khub::read_file(link), "bytes");
  ASSERT_TRUE(link_snapshot_file(c, r, kCommit, "copy.txt", "e", true));
  EXPECT_FALSE(fs::is_symlink(c.snapshot_file(r, kCommit, "copy.txt")));
  ASSERT_TRUE(mark_missing(c, r, kCommit, "kernel-status.toml"));
  EXPECT_TRUE(fs::exists(c.no_exist(r, kCommit, "kernel-status.toml")));
  fs::remove_all(root);
}

TEST(CacheIo, VersionBranchNames) {
  EXPECT_EQ(parse_version_branch("v1"), 1);
  EXPECT_EQ(parse_version_branch("v010"), 10);
  for (auto bad : {"v", "1", "v1_0", "v+1", "main", "vx"}) EXPECT_FALSE(parse_version_branch(bad)) << bad;
}

}  // namespace
