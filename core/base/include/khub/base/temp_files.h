#pragma once
// Temp files that Ctrl-C must not leave behind. Code that creates one (a bundle being packed, a file
// written atomically) holds a TempFileGuard while it exists; the CLI installs
// remove_temp_files_on_signal() once, whose SIGINT / SIGTERM handler unlinks every guarded file and
// then lets the signal end the process as it would have. Without the handler a guard does nothing.
#include <filesystem>

namespace khub {

class TempFileGuard {
 public:
  explicit TempFileGuard(const std::filesystem::path& path);
  ~TempFileGuard();
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;

 private:
  int slot_ = -1;  // -1: every slot taken (the file is then not removed on a signal)
};

/// Installs the SIGINT / SIGTERM handler (async-signal-safe: unlink, then the default action).
void remove_temp_files_on_signal();

}  // namespace khub
