// FileLock: the lock file's mode (shared caches) and waiting on a held lock.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "khub/base/fs.h"

namespace khub {
namespace {

namespace fs = std::filesystem;

TEST(FileLock, GroupWritableWhateverTheUmaskAndExclusive) {
  const fs::path dir = fs::temp_directory_path() / ("khub-lock-" + std::to_string(::getpid()) + "-" +
                                                     std::to_string(std::random_device{}()));
  const fs::path path = dir / "locks" / "abc.lock";
  const mode_t before = ::umask(022);
  auto first = FileLock::acquire(path, std::chrono::milliseconds(0));
  ::umask(before);
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->held());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0664u);  // as huggingface_hub's, so a group can share the cache
  // flock is per open file: a second acquire waits out its timeout and holds nothing.
  auto second = FileLock::acquire(path, std::chrono::milliseconds(20));
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->held());
  *first = FileLock();
  auto third = FileLock::acquire(path, std::chrono::milliseconds(20));
  ASSERT_TRUE(third);
  EXPECT_TRUE(third->held());
  fs::remove_all(dir);
}

// A document larger than the bound is refused before it is read into memory.
TEST(ReadFile, RefusesFilesLongerThanItsBound) {
  const auto path = std::filesystem::temp_directory_path() / ("khub-read-bound-" + std::to_string(::getpid()));
  std::ofstream(path, std::ios::binary) << std::string(300000, 'x');
  auto whole = read_file(path);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->size(), 300000u);
  auto bounded = read_file(path, 200000);
  ASSERT_FALSE(bounded);
  EXPECT_EQ(bounded.error().code, ErrorCode::InvalidArgument);
  EXPECT_TRUE(read_file(path, 300000));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace khub
