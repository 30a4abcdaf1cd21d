// Cache paths, the ref / pointer I/O, CACHEDIR.TAG and the cached tree listing (docs/protocol.md,
// Cache layout).
#include <gtest/gtest.h>

#include <fstream>

#include "khub/base/fs.h"
#include "khub/hub/cache.h"
#include "khub/hub/cache_tree.h"

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
  EXPECT_EQ(c.tree_listing(r, kCommit), "/c/kernels--org--relu/trees/" + kCommit + ".json");
  EXPECT_EQ(c.cachedir_tag(), "/c/CACHEDIR.TAG");
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

// A temp cache root, removed at scope end.
struct TempCache {
  fs::path root = fs::temp_directory_path() / ("khub-cache-test-" + khub::random_hex8());
  CacheLayout layout{root};
  ~TempCache() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

TEST(CacheIo, CachedirTagHasHuggingfaceHubsBytesAndIsNeverRewritten) {
  TempCache c;
  RepoRef r{RepoType::Kernel, "org/relu"};
  ASSERT_TRUE(tag_cache_dir(c.layout, r));
  EXPECT_EQ(*khub::read_file(c.layout.cachedir_tag()),
            "Signature: 8a477f597d28d172789f06886806bc55\n"
            "# This file is a cache directory tag created by huggingface_hub.\n"
            "# For information about cache directory tags, see:\n"
            "#\thttps://bford.info/cachedir/\n");
  ASSERT_TRUE(khub::write_file_atomic(c.layout.cachedir_tag(), "Signature: 8a477f597d28d172789f06886806bc55\n"));
  ASSERT_TRUE(tag_cache_dir(c.layout, r));
  EXPECT_EQ(*khub::read_file(c.layout.cachedir_tag()), "Signature: 8a477f597d28d172789f06886806bc55\n");
}

std::vector<TreeEntry> sample_listing() {
  TreeEntry dir{.path = "build", .directory = true, .oid = std::string(40, 'd')};
  TreeEntry text{.path = "docs/caf\xc3\xa9 \"q\".md", .oid = std::string(40, '1'), .size = 3};
  TreeEntry so{.path = "build/v/x.so", .oid = std::string(40, 'a'), .size = 4096, .lfs_oid = std::string(64, 'b'),
               .xet_hash = std::string(64, 'c')};
  return {text, dir, so};
}

// What huggingface_hub 2.4.0's json.dump(indent=1) wrote for the same listing (checked against the
// real client in interop_test.cpp): sorted paths, upstream's key order, \u escapes, no final newline.
TEST(CacheTree, ListingBytesAreHuggingfaceHubs) {
  EXPECT_EQ(tree_listing_json(sample_listing()),
            "{\n \"format_version\": 1,\n \"files\": {\n  \"build/v/x.so\": {\n   \"size\": 4096,\n   \"blob_id\": \"" +
                std::string(40, 'a') + "\",\n   \"lfs_sha256\": \"" + std::string(64, 'b') +
                "\",\n   \"lfs_size\": 4096,\n   \"xet_hash\": \"" + std::string(64, 'c') +
                "\"\n  },\n  \"docs/caf\\u00e9 \\\"q\\\".md\": {\n   \"size\": 3,\n   \"blob_id\": \"" +
                std::string(40, '1') + "\"\n  }\n }\n}");
  EXPECT_EQ(tree_listing_json({}), "{\n \"format_version\": 1,\n \"files\": {}\n}");
  // A tab, DEL and a character beyond U+FFFF (a surrogate pair), as Python escapes them.
  TreeEntry odd{.path = "e/\t\x7f\xf0\x9f\x98\x80.txt", .oid = std::string(40, '1')};
  EXPECT_EQ(tree_listing_json({odd}), "{\n \"format_version\": 1,\n \"files\": {\n  \"e/\\t\\u007f\\ud83d\\ude00.txt\": "
                                      "{\n   \"size\": 0,\n   \"blob_id\": \"" + std::string(40, '1') + "\"\n  }\n }\n}");
}

TEST(CacheTree, WrittenListingReadsBack) {
  TempCache c;
  RepoRef r{RepoType::Kernel, "org/relu"};
  EXPECT_FALSE(read_tree_listing(c.layout, r, kCommit));
  ASSERT_TRUE(write_tree_listing(c.layout, r, kCommit, sample_listing()));
  auto listing = read_tree_listing(c.layout, r, kCommit);
  ASSERT_TRUE(listing);
  ASSERT_EQ(listing->size(), 2u);  // files only, sorted
  EXPECT_EQ((*listing)[0].path, "build/v/x.so");
  EXPECT_EQ((*listing)[0].etag(), std::string(64, 'b'));
  EXPECT_EQ((*listing)[0].size, 4096u);
  EXPECT_EQ((*listing)[0].xet_hash, std::string(64, 'c'));
  EXPECT_EQ((*listing)[1].path, "docs/caf\xc3\xa9 \"q\".md");
  EXPECT_EQ((*listing)[1].etag(), std::string(40, '1'));
  EXPECT_FALSE(write_tree_listing(c.layout, r, "main", sample_listing()));  // it names a file: a commit only
  // A bad Xet hash: upstream writes nothing, and neither does khub.
  auto bad = sample_listing();
  bad[2].xet_hash = "not-a-hash";
  const std::string other(40, 'e');
  ASSERT_TRUE(write_tree_listing(c.layout, r, other, bad));
  EXPECT_FALSE(fs::exists(c.layout.tree_listing(r, other)));
}

// Untrusted input: whatever huggingface_hub would ignore, or khub could not check a file against,
// reads as no listing at all.
TEST(CacheTree, ListingsThatCannotBeTrustedAreIgnored) {
  TempCache c;
  RepoRef r{RepoType::Kernel, "org/relu"};
  const std::string sha1(40, 'a');
  auto entry = [&](const std::string& path, const std::string& info) {
    return "{\"format_version\": 1, \"files\": {\"" + path + "\": " + info + "}}";
  };
  const std::string good = "{\"size\": 3, \"blob_id\": \"" + sha1 + "\"}";
  ASSERT_TRUE(khub::write_file_atomic(c.layout.tree_listing(r, kCommit), entry("a.txt", good)));
  ASSERT_TRUE(read_tree_listing(c.layout, r, kCommit));
  // Null optional fields are Python's None: still a listing.
  const std::string nulls = "{\"size\": 3, \"blob_id\": \"" + sha1 + "\", \"lfs_sha256\": null, \"xet_hash\": null}";
  ASSERT_TRUE(khub::write_file_atomic(c.layout.tree_listing(r, kCommit), entry("a.txt", nulls)));
  ASSERT_TRUE(read_tree_listing(c.layout, r, kCommit));
  const std::vector<std::string> untrusted = {
      "not json",
      std::string(200, '[') + std::string(200, ']'),
      "{\"format_version\": 2, \"files\": {}}",
      "{\"files\": {}}",
      "{\"format_version\": 1, \"files\": []}",
      entry("../escape", good),
      entry("/abs", good),
      entry("a.txt", "{\"size\": -1, \"blob_id\": \"" + sha1 + "\"}"),
      entry("a.txt", "{\"size\": 3, \"blob_id\": \"main\"}"),
      entry("a.txt", "{\"size\": 3}"),
      entry("a.txt", "{\"size\": 3, \"blob_id\": \"" + sha1 + "\", \"lfs_sha256\": \"short\"}"),
      entry("a.txt", "{\"size\": 3, \"blob_id\": \"" + sha1 + "\", \"xet_hash\": \"zz\"}"),
      entry("a.txt", "[]"),
  };
  for (const auto& text : untrusted) {
    ASSERT_TRUE(khub::write_file_atomic(c.layout.tree_listing(r, kCommit), text));
    EXPECT_FALSE(read_tree_listing(c.layout, r, kCommit)) << text;
  }
}

TEST(CacheIo, VersionBranchNames) {
  EXPECT_EQ(parse_version_branch("v1"), 1);
  EXPECT_EQ(parse_version_branch("v010"), 10);
  for (auto bad : {"v", "1", "v1_0", "v+1", "main", "vx"}) EXPECT_FALSE(parse_version_branch(bad)) << bad;
}

}  // namespace
