// Ctrl-C (SIGINT / SIGTERM) removes the temp files guarded at that moment and still ends the
// process by the signal; files no longer guarded stay.
#include "khub/base/temp_files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace {
namespace fs = std::filesystem;

TEST(TempFiles, ASignalRemovesGuardedFilesOnly) {
  const fs::path dir = fs::temp_directory_path() / ("khub_tmpguard_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path guarded = dir / "bundle.tar.zst.tmp1", released = dir / "done.tmp", other = dir / "keep";
  for (int sig : {SIGINT, SIGTERM}) {
    for (const auto& p : {guarded, released, other}) std::ofstream(p) << "x";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      khub::remove_temp_files_on_signal();
      { const khub::TempFileGuard done(released); }  // released before the signal: kept
      const khub::TempFileGuard guard(guarded);
      ::raise(sig);
      ::_exit(0);  // not reached: the signal ends the process
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
    EXPECT_FALSE(fs::exists(guarded)) << sig;
    EXPECT_TRUE(fs::exists(released)) << sig;
    EXPECT_TRUE(fs::exists(other)) << sig;
  }
  fs::remove_all(dir);
}

}  // namespace
