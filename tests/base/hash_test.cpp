#include "khub/base/hash.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

namespace khub {
namespace {

std::vector<std::uint8_t> digest_of(std::string_view data, HashAlgorithm a) {
  Hasher h(a);
  h.update(data);
  return h.finish();
}

// Vectors of kernel-builder digests and of the git blob ids of lock_test's git_lfs_concat vector.
TEST(Hash, DigestVectorsMatchKernelBuilder) {
  EXPECT_EQ(base64_encode(digest_of("hello world", HashAlgorithm::Sha256)),
            "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=");
  EXPECT_EQ(base64_encode(digest_of("hello world", HashAlgorithm::Sha512)),
            "MJ7MSJwS1utMxA9QyQLytNDtd+5RGnx6m808qG1M2G+YndNbxf9JlnDaNCVbRbDP2DDoH2Bdz33FVC6TrpzXbw==");
  EXPECT_EQ(base64_encode(digest_of("from ._ops import ops\n", HashAlgorithm::Sha256)),
            "oJkKRxmymMxOBcRXhqsfbO0E+ZiDfCQ2pRXm7qmMTA8=");
  EXPECT_EQ(base64_encode(digest_of("", HashAlgorithm::Sha256)), "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
}

TEST(Hash, GitBlobSha1MatchesGit) {
  EXPECT_EQ(git_blob_sha1_hex("from ._ops import ops\n"), "1cec5723464b586acbda5ab039a6248d38255033");
  EXPECT_EQ(git_blob_sha1_hex("from .. import *\n"), "7aab8e975a6b6be68f5bbe4d2c6e05d7c000aeb6");
  EXPECT_EQ(git_blob_sha1_hex("z"), "fa7af8bf5fdd704f73beb3adc5612682a98e1af5");
  EXPECT_EQ(git_blob_sha1_hex(""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

TEST(Hash, Sha256Hex) {
  EXPECT_EQ(sha256_hex("\x7f" "ELF-fake-binary"),
            "c36db55579ed34818d39e49d1b76f50af3668745d1c76441e1a41faddcfb9c17");
}

TEST(Hash, FileHashesEqualInMemoryHashes) {
  auto dir = std::filesystem::temp_directory_path() / ("khub-hash-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string content(200000, 'x');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 + 3);
  std::ofstream(dir / "f", std::ios::binary) << content;
  auto blob = git_blob_sha1_file(dir / "f");
  ASSERT_TRUE(blob);
  EXPECT_EQ(*blob, git_blob_sha1_hex(content));
  auto sha = hash_file(dir / "f", HashAlgorithm::Sha256);
  ASSERT_TRUE(sha);
  EXPECT_EQ(to_hex(*sha), sha256_hex(content));
  auto missing = hash_file(dir / "missing", HashAlgorithm::Sha256);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::Io);
  std::filesystem::remove_all(dir);
}

// HashReuse::Unchanged answers from memory only for a file that is old enough and unchanged since
// it was read; every change (same size, same path) and every other algorithm reads it again.
TEST(Hash, ReuseSkipsOnlySettledUnchangedFiles) {
  auto dir = std::filesystem::temp_directory_path() / ("khub-hash-reuse-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string first(100000, 'a'), second(100000, 'b');
  std::ofstream(dir / "settled", std::ios::binary) << first;
  std::ofstream(dir / "recent", std::ios::binary) << first;
  std::ofstream(dir / "fresh", std::ios::binary) << first;
  auto read_by = [](auto&& call) {
    const std::uint64_t before = hash_file_bytes_read();
    auto digest = call();
    EXPECT_TRUE(digest);
    return std::pair{digest ? to_hex(*digest) : std::string(), hash_file_bytes_read() - before};
  };
  auto sha = [&](const char* name, HashReuse reuse, HashAlgorithm a = HashAlgorithm::Sha256) {
    return read_by([&] { return hash_file(dir / name, a, reuse); });
  };

  // Written just now: read every time, even when reuse is allowed.
  EXPECT_EQ(sha("fresh", HashReuse::Unchanged), std::pair(sha256_hex(first), std::uint64_t{100000}));
  EXPECT_EQ(sha("fresh", HashReuse::Unchanged).second, 100000u);

  // Half a second old: settled where stamps carry sub-second parts (a build hashed, then pushed, is
  // read once), still read again where they are whole seconds.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  struct stat st {};
  ASSERT_EQ(::stat((dir / "recent").c_str(), &st), 0);
  const bool sub_second = st.st_mtim.tv_nsec != 0 || st.st_ctim.tv_nsec != 0;
  EXPECT_EQ(sha("recent", HashReuse::Unchanged).second, 100000u);
  EXPECT_EQ(sha("recent", HashReuse::Unchanged).second, sub_second ? 0u : 100000u);

  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  EXPECT_EQ(sha("settled", HashReuse::Unchanged), std::pair(sha256_hex(first), std::uint64_t{100000}));
  EXPECT_EQ(sha("settled", HashReuse::Unchanged), std::pair(sha256_hex(first), std::uint64_t{0}));
  EXPECT_EQ(sha("settled", HashReuse::Never).second, 100000u);
  EXPECT_EQ(sha("settled", HashReuse::Unchanged, HashAlgorithm::Sha512).second, 100000u);

  // Rewritten in place with the same size: its ctime moved, so it is read again.
  { std::ofstream(dir / "settled", std::ios::binary | std::ios::in) << second; }
  EXPECT_EQ(sha("settled", HashReuse::Unchanged), std::pair(sha256_hex(second), std::uint64_t{100000}));
  std::filesystem::remove_all(dir);
}

TEST(Hash, HexAndBase64RoundTrip) {
  std::vector<std::uint8_t> bytes{0, 1, 0x7f, 0x80, 0xfe, 0xff, 42};
  EXPECT_EQ(from_hex(to_hex(bytes)), bytes);
  EXPECT_TRUE(from_hex("abc").empty());
  EXPECT_TRUE(from_hex("zz").empty());
  for (std::size_t n = 0; n <= bytes.size(); ++n) {
    std::vector<std::uint8_t> part(bytes.begin(), bytes.begin() + static_cast<long>(n));
    auto decoded = base64_decode(base64_encode(part));
    ASSERT_TRUE(decoded) << n;
    EXPECT_EQ(*decoded, part);
  }
  EXPECT_FALSE(base64_decode("abc"));
  EXPECT_FALSE(base64_decode("a!c="));
}

TEST(Hash, CommitHashShapes) {
  EXPECT_TRUE(is_commit_hash(std::string(40, 'a')));
  EXPECT_TRUE(is_commit_hash(std::string(64, 'F')));
  EXPECT_FALSE(is_commit_hash(std::string(41, 'a')));
  EXPECT_FALSE(is_commit_hash("main"));
  EXPECT_FALSE(is_commit_hash(std::string(39, 'a') + "g"));
}

TEST(Hash, SecretsEqual) {
  EXPECT_TRUE(secrets_equal("hf_abc", "hf_abc"));
  EXPECT_FALSE(secrets_equal("hf_abc", "hf_abd"));
  EXPECT_FALSE(secrets_equal("hf_abc", "hf_ab"));
  EXPECT_FALSE(secrets_equal("", "x"));
  EXPECT_TRUE(secrets_equal("", ""));
}

}  // namespace
}  // namespace khub
