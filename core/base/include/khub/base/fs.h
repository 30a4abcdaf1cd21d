#pragma once
// Small filesystem helpers shared by the cache and the CLI: whole-file reads, atomic writes
// (temp file in the same folder, fsync, rename) and an advisory cross-process lock.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "khub/base/error.h"

namespace khub {

/// The most khub reads of a document it parses (metadata.json, build.toml, locks, bundles, TOML
/// redirects): far above any real one, small enough that a hostile file cannot exhaust memory.
inline constexpr std::uint64_t kMaxDocumentBytes = std::uint64_t{64} << 20;

/// Reads a whole file; Io when it cannot be opened or read, InvalidArgument when it is longer than
/// `max_bytes` (nothing of it is read then).
[[nodiscard]] Expected<std::string> read_file(const std::filesystem::path& path,
                                              std::uint64_t max_bytes = kMaxDocumentBytes);

/// Writes `content` to `<path>.<pid>.<8 hex>.tmp`, fsyncs it, renames it over `path` and fsyncs the
/// folder. Parent folders are created. `mode` is the new file's (before the umask). On failure the
/// temp file is removed and Io is returned.
///
/// With `staging_dir`, the temp file is made there instead (`<staging_dir>/<name>.<pid>.<8 hex>.tmp`,
/// the folder created): readers that walk `path`'s folder (a cache's digest check, another client's
/// cache scan) then never see a half-made or in-flight name. It must be on `path`'s filesystem; where
/// it is not (EXDEV), the write falls back to a temp file next to `path`.
[[nodiscard]] Status write_file_atomic(const std::filesystem::path& path, std::string_view content,
                                       unsigned mode = 0644, const std::filesystem::path& staging_dir = {});
/// `.<pid>.<8 hex>.tmp`: the suffix of this process's temp names (write_file_atomic, cache pointers).
[[nodiscard]] std::string temp_name_suffix();
/// The pid in a name that ends with a temp suffix (`<name>.<pid>.<8 hex>.tmp`), else 0.
[[nodiscard]] long temp_name_pid(std::string_view filename) noexcept;

/// 8 random lower-case hex characters, for process-unique temp names.
[[nodiscard]] std::string random_hex8();

/// An flock()-based exclusive lock on a lock file, released by the destructor. Lock files are
/// advisory: callers must stay correct without them (unique temp names + atomic rename).
class FileLock {
 public:
  /// Creates the lock file (mode 0664, and its folder) and waits up to `timeout` for the lock.
  /// Returns Io when the file cannot be created; a FileLock that holds nothing (held() false) on
  /// timeout, where locks are unsupported, or when the file is another user's and not ours to open.
  [[nodiscard]] static Expected<FileLock> acquire(const std::filesystem::path& path,
                                                  std::chrono::milliseconds timeout);
  FileLock() = default;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  [[nodiscard]] bool held() const noexcept { return held_; }

 private:
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace khub
