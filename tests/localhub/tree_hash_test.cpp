// Git object ids and repo path rules (localhub/src/tree_hash.cpp), checked against ids computed
// by git itself (git write-tree / commit-tree with fixed dates) and a known LFS pointer vector.
#include "tree_hash.h"

#include <gtest/gtest.h>

#include "khub/base/hash.h"

namespace khub::localhub {
namespace {

FileEntry regular(std::string path, std::string_view content) {
  return FileEntry{std::move(path), content.size(), git_blob_sha1_hex(content), sha256_hex(content), false};
}

TEST(TreeHash, EmptyTreeIsGitsEmptyTree) {
  EXPECT_EQ(directory_oids({}).at(""), "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
}

TEST(TreeHash, NestedTreeMatchesGitWriteTree) {
  // "dir-x" sorts before "dir" because git compares a folder as "dir/".
  std::vector<FileEntry> files{regular("a.txt", "hello\n"), regular("dir-x", "q"), regular("dir/b.txt", "z"),
                               regular("dir/sub/c", "x")};
  auto oids = directory_oids(files);
  EXPECT_EQ(oids.at(""), "ae0512649c1f7eb2297443b82bfe08d2ced48999");
  EXPECT_EQ(oids.at("dir"), "14010429f0ae32b8895700fd875d4b2de0123cc1");
  EXPECT_EQ(oids.size(), 3u);  // "", "dir", "dir/sub"
}

TEST(TreeHash, CommitIdsMatchGitCommitTree) {
  auto first = commit_oid("ae0512649c1f7eb2297443b82bfe08d2ced48999", "", "first", "", 1700000000);
  EXPECT_EQ(first, "62b334d9c7148e833737418881d0095aca832495");
  EXPECT_EQ(commit_oid("ae0512649c1f7eb2297443b82bfe08d2ced48999", first, "second", "body text", 1700000001),
            "28801055e701cab60f838eca162e5c85606f2baf");
}

TEST(TreeHash, LfsPointerMatchesSpecVector) {
  auto p = lfs_pointer("c36db55579ed34818d39e49d1b76f50af3668745d1c76441e1a41faddcfb9c17", 16);
  EXPECT_EQ(p.size(), 127u);
  EXPECT_EQ(git_blob_sha1_hex(p), "d87db20d363de8d710166e98d5a0beec8b06c18b");
}

TEST(RepoPath, AcceptsNormalPaths) {
  for (auto p : {"a", "build/torch-cpu/__init__.py", ".gitattributes", "a b/c.d", "x..y"}) {
    EXPECT_EQ(check_repo_path(p), "") << p;
  }
}

TEST(RepoPath, RejectsTraversalAndOddBytes) {
  using namespace std::string_literals;
  for (auto p : {""s, "/etc/passwd"s, "../x"s, "a/../b"s, "a/./b"s, "a//b"s, "a/"s, "..\\b"s, "a\0b"s, ".git/config"s,
                 "x/.git"s, "tab\there"s, std::string(1025, 'a')}) {
    EXPECT_NE(check_repo_path(p), "") << p;
  }
}

// As on the Hub: a backslash is an ordinary character, unless the path starts by leaving the root.
TEST(RepoPath, KeepsBackslashesInsideNames) {
  EXPECT_EQ(check_repo_path("folder/..\\..\\file"), "");
  EXPECT_EQ(check_repo_path("a\\b.txt"), "");
  EXPECT_NE(check_repo_path("..\\ddd"), "");
}

}  // namespace
}  // namespace khub::localhub
