#include "khub/protocol/digest.h"

#include <gtest/gtest.h>

#include <fstream>

#include <unistd.h>

namespace khub::protocol {
namespace {

namespace fs = std::filesystem;

class DigestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("khub-digest-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, std::string_view data) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << data;
  }
  fs::path dir_;
};

TEST_F(DigestTest, HashesEveryFileWithExclusions) {
  write("a.txt", "hello world");
  write("__init__.py", "from ._ops import ops\n");
  write("empty", "");
  write("metadata.json", "{}");
  write("metadata.json.sigstore", "{}");
  write("sub/metadata.json", "");  // nested copies are hashed
  write("x.pyc", "junk");
  write("__pycache__/y.py", "junk");
  write("sub/__pycache__/z", "junk");
  fs::create_directory_symlink(dir_ / "sub", dir_ / "dirlink");  // not followed
  fs::create_symlink("a.txt", dir_ / "filelink");                // hashed by target bytes
  auto d = compute_digest(dir_);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->algorithm, DigestAlgorithm::Sha256);
  std::map<std::string, std::string> expected = {
      {"__init__.py", "oJkKRxmymMxOBcRXhqsfbO0E+ZiDfCQ2pRXm7qmMTA8="},
      {"a.txt", "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="},
      {"empty", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
      {"filelink", "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="},
      {"sub/metadata.json", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
  };
  EXPECT_EQ(d->files, expected);
  auto d512 = compute_digest(dir_, DigestAlgorithm::Sha512);
  ASSERT_TRUE(d512);
  EXPECT_EQ(d512->files.at("a.txt"),
            "MJ7MSJwS1utMxA9QyQLytNDtd+5RGnx6m808qG1M2G+YndNbxf9JlnDaNCVbRbDP2DDoH2Bdz33FVC6TrpzXbw==");
}

TEST_F(DigestTest, EmptyDirectoryAndErrors) {
  auto d = compute_digest(dir_);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->files.empty());
  EXPECT_FALSE(compute_digest(dir_ / "missing"));
  fs::create_symlink("nowhere", dir_ / "dangling");
  auto bad = compute_digest(dir_);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::Io);
}

TEST(DigestCompare, ViolationsInUpstreamOrder) {
  Digest expected{DigestAlgorithm::Sha256, {{"a.txt", "zzz"}, {"gone", "q"}, {"sub/b.py", "LXXXX"}}};
  Digest actual{DigestAlgorithm::Sha512, {{"a.txt", "AAA"}, {"link", "L"}, {"sub/b.py", "LXXXX"}, {"sub/m", "M"}}};
  auto v = compare_digests(expected, actual);
  std::vector<std::string> texts;
  for (const auto& x : v) texts.push_back(x.describe());
  EXPECT_EQ(texts, (std::vector<std::string>{"Algorithm mismatch: expected: SHA256, got: SHA512",
                                             "File hash mismatch for a.txt: expected: zzz, got: AAA",
                                             "Missing file: gone", "Unknown file: link", "Unknown file: sub/m"}));
  EXPECT_TRUE(compare_digests(expected, expected).empty());
}

TEST_F(DigestTest, VerifyReportsIntegrityError) {
  write("a.txt", "hello world");
  auto d = compute_digest(dir_);
  ASSERT_TRUE(d);
  EXPECT_TRUE(verify_digest(dir_, *d));
  write("a.txt", "changed");
  write("new.py", "");
  auto st = verify_digest(dir_, *d);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, ErrorCode::Integrity);
  EXPECT_EQ(st.error().message,
            "kernel does not match the expected digest:\nFile hash mismatch for a.txt: expected: "
            "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=, got: 1n4ulEmUSWyNjsdu7Qz58JZ5RI1YS1Mr6/lBhSo39e0=\n"
            "Unknown file: new.py");
}

TEST(DigestPaths, Exclusions) {
  EXPECT_FALSE(is_digested_path("metadata.json"));
  EXPECT_FALSE(is_digested_path("metadata.json.sigstore"));
  EXPECT_TRUE(is_digested_path("layers/metadata.json"));
  EXPECT_FALSE(is_digested_path("a/__pycache__/b.py"));
  EXPECT_FALSE(is_digested_path("b.pyc"));
  EXPECT_TRUE(is_digested_path("_ops.py"));
  // Whole folder names and Rust's extension rule (kernels-data), not suffixes.
  EXPECT_TRUE(is_digested_path("foo__pycache__/m.py"));
  EXPECT_TRUE(is_digested_path("data/.pyc"));
  EXPECT_TRUE(is_digested_path("a.pyc.txt"));
  EXPECT_FALSE(is_digested_path("__pycache__"));
  EXPECT_FALSE(is_digested_path("x/y.z.pyc"));
}

}  // namespace
}  // namespace khub::protocol
