#include "khub/protocol/lock.h"

#include <gtest/gtest.h>

namespace khub::protocol {
namespace {

// The git_lfs_concat test vector: three git blobs and one LFS file of one variant.
std::vector<TreeFile> spec_tree(const std::string& variant) {
  const std::string base = "build/" + variant + "/";
  return {
      {base + "__init__.py", "1cec5723464b586acbda5ab039a6248d38255033", std::nullopt},
      {base + "_relu_cuda_abc1234.abi3.so", "d87db20d363de8d710166e98d5a0beec8b06c18b",
       "c36db55579ed34818d39e49d1b76f50af3668745d1c76441e1a41faddcfb9c17"},
      {base + "relu/__init__.py", "7aab8e975a6b6be68f5bbe4d2c6e05d7c000aeb6", std::nullopt},
      {base + "Z.txt", "fa7af8bf5fdd704f73beb3adc5612682a98e1af5", std::nullopt},
  };
}

constexpr const char* kSpecHash = "sha256-00aab305b24895b4e03d4b95e63cee7d3546b097cc7e79638680a17143d4f31c";

TEST(Lock, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_FALSE(parse_lock_file(deep));
  EXPECT_FALSE(parse_lock_file(R"({"a":)" + std::string(200000, '[') + std::string(200000, ']') + "}"));
}

TEST(GitLfsConcat, SpecVector) {
  auto h = git_lfs_concat_hash({{"__init__.py", "1cec5723464b586acbda5ab039a6248d38255033"},
                                {"_relu_cuda_abc1234.abi3.so",
                                 "c36db55579ed34818d39e49d1b76f50af3668745d1c76441e1a41faddcfb9c17"},
                                {"relu/__init__.py", "7aab8e975a6b6be68f5bbe4d2c6e05d7c000aeb6"},
                                {"Z.txt", "fa7af8bf5fdd704f73beb3adc5612682a98e1af5"}});
  ASSERT_TRUE(h);
  EXPECT_EQ(*h, kSpecHash);
  auto empty = git_lfs_concat_hash({});
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, "sha256-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(GitLfsConcat, LockVariantsFromTree) {
  auto tree = spec_tree("torch210-cxx11-cu128-x86_64-linux");
  auto more = spec_tree("torch210-cxx11-cu128-x86_64-linux-b");
  tree.insert(tree.end(), more.begin(), more.end());
  tree.push_back({"build/torch210-cxx11-cu128-x86_64-linux/__pycache__/x.pyc", "", std::nullopt});
  tree.push_back({"build/torch210-cxx11-cu128-x86_64-linux/y.pyc", "", std::nullopt});
  tree.push_back({"build/tvm-ffi01-cu128-x86_64-linux/a.so", "fa7af8bf5fdd704f73beb3adc5612682a98e1af5", std::nullopt});
  tree.push_back({"README.md", "fa7af8bf5fdd704f73beb3adc5612682a98e1af5", std::nullopt});
  auto locked = lock_variants(tree);
  ASSERT_TRUE(locked) << locked.error().message;
  ASSERT_EQ(locked->size(), 2u);
  // Tree order of paths: `…-linux-b/` sorts before `…-linux/` because '-' < '/'.
  EXPECT_EQ((*locked)[0].first, "torch210-cxx11-cu128-x86_64-linux-b");
  EXPECT_EQ((*locked)[1].first, "torch210-cxx11-cu128-x86_64-linux");
  EXPECT_EQ((*locked)[0].second.hash, kSpecHash);
  EXPECT_EQ((*locked)[1].second.hash, kSpecHash);
  tree.push_back({"build/torch-cuda/x.py", "", std::nullopt});
  auto bad = lock_variants(tree);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "Cannot get blob ID for build/torch-cuda/x.py");
}

TEST(LegacyLock, RoundTripsPythonJsonDump) {
  LegacyLock l{"kernels-community/relu", "d649efb56fb249ac8f7a57fa1866728ad0c60e52",
               {{"torch-cuda", {kSpecHash, "git_lfs_concat"}}}};
  LegacyLock other{"org/caf\xc3\xa9", std::string(40, '0'), {}};
  const std::string text = serialize_legacy_locks({l, other});
  EXPECT_EQ(text, std::string(R"([
  {
    "repo_id": "kernels-community/relu",
    "sha": "d649efb56fb249ac8f7a57fa1866728ad0c60e52",
    "variants": {
      "torch-cuda": {
        "hash": ")") + kSpecHash + R"(",
        "hash_type": "git_lfs_concat"
      }
    }
  },
  {
    "repo_id": "org/caf\u00e9",
    "sha": "0000000000000000000000000000000000000000",
    "variants": {}
  }
])");
  auto parsed = parse_lock_file(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->format, LockFormat::Legacy);
  ASSERT_EQ(parsed->legacy.size(), 2u);
  EXPECT_EQ(parsed->legacy[0], l);
  EXPECT_EQ(parsed->legacy[1].repo_id, "org/caf\xc3\xa9");
  EXPECT_EQ(parsed->commit_for("kernels-community/relu"), "d649efb56fb249ac8f7a57fa1866728ad0c60e52");
  EXPECT_FALSE(parsed->commit_for("x/y"));
}

TEST(LegacyLock, RejectsBadEntries) {
  EXPECT_FALSE(parse_lock_file(R"([{"repo_id":"a/b","variants":{}}])"));
  EXPECT_FALSE(parse_lock_file(R"([{"repo_id":"a/b","sha":"x","variants":{"v":{"hash":"h","extra":"1"}}}])"));
  auto defaulted = parse_lock_file(R"([{"repo_id":"a/b","sha":"x","variants":{"v":{"hash":"h"}}}])");
  ASSERT_TRUE(defaulted);
  EXPECT_EQ(defaulted->legacy[0].variants[0].second.hash_type, "git_lfs_concat");
  EXPECT_FALSE(parse_lock_file("{}"));
}

TEST(KernelLocks, SortedAndStrict) {
  const std::string c1(40, 'a'), c2(64, 'b');
  std::vector<KernelLock> locks = {{"z/k", std::nullopt, "main", c1, std::nullopt},
                                   {"a/k", std::nullopt, "dev", c2, std::nullopt},
                                   {"a/k", 1, std::nullopt, c1, "sha256-abc="}};
  auto text = serialize_kernel_locks(locks);
  ASSERT_TRUE(text);
  auto parsed = parse_lock_file(*text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->format, LockFormat::Current);
  ASSERT_EQ(parsed->current.size(), 3u);
  EXPECT_EQ(parsed->current[0].version, 1u);
  EXPECT_EQ(parsed->current[0].hash, "sha256-abc=");
  EXPECT_EQ(parsed->current[1].revision, "dev");
  EXPECT_EQ(parsed->current[2].repo_id, "z/k");
  EXPECT_EQ(parsed->commit_for("a/k"), c1);
  EXPECT_TRUE(text->starts_with("[\n  {\n    \"dependency\": {\n      \"repo-id\": \"a/k\",\n      \"version\": 1\n"));

  locks.push_back(locks[0]);
  auto dup = serialize_kernel_locks(locks);
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().message, "duplicate dependency: z/k");
  EXPECT_FALSE(parse_lock_file(R"([{"dependency":{"repo-id":"a/b","version":1},"lock":{"commit":"abc"}}])"));
  EXPECT_FALSE(parse_lock_file(R"([{"dependency":{"repo-id":"a/b","version":1,"x":2},"lock":{"commit":")" + c1 + "\"}}]"));
  EXPECT_FALSE(parse_lock_file(R"([{"dependency":{"repo-id":"a/b","version":1},"lock":{"commit":")" + c1 + "\"},\"x\":1}]"));
  auto twice = R"({"dependency":{"repo-id":"a/b","version":1},"lock":{"commit":")" + c1 + "\"}}";
  auto d = parse_lock_file("[" + twice + "," + twice + "]");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().message, "duplicate dependency: a/b");
}

}  // namespace
}  // namespace khub::protocol
