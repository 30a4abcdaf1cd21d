// FileLock: the lock file's mode (shared caches) and waiting on a held lock.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
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

}  // namespace
}  // namespace khub
