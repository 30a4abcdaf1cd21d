#pragma once
// Helpers shared by the hub tests: a temp folder removed at scope end, client options aimed at a
// FixtureHub with short retry waits, and a sample kernel repo.
#include <filesystem>
#include <map>
#include <string>

#include "fixture_hub.h"
#include "khub/hub/options.h"

namespace khub::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Options for `hub` with the cache in `cache`, retries of a few milliseconds.
[[nodiscard]] hub::ClientOptions fixture_options(const FixtureHub& hub, const std::filesystem::path& cache);

/// A small kernel variant: metadata.json (with digest), __init__.py, a fake LFS .so, a nested file.
[[nodiscard]] std::map<std::string, FixtureFile> sample_variant_files(const std::string& variant,
                                                                      const std::string& id,
                                                                      std::size_t so_size = 4096);

/// Reads a file into a string ("" when missing).
[[nodiscard]] std::string slurp(const std::filesystem::path& path);

struct Run {
  int code = -1;    // exit status, -1 when the command did not exit normally
  std::string out;  // its standard output
};
/// Runs a shell command line and collects its standard output and exit status.
[[nodiscard]] Run run_shell(const std::string& command);

}  // namespace khub::test
