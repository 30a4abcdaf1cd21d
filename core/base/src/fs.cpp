#include "khub/base/fs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "khub/base/temp_files.h"

namespace khub {
namespace fs = std::filesystem;

Expected<std::string> read_file(const fs::path& path, std::uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::Io, "cannot open " + path.string() + ": " + std::strerror(errno));
  std::string out;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    if (out.size() + static_cast<std::uint64_t>(in.gcount()) > max_bytes)
      return Error(ErrorCode::InvalidArgument,
                   path.string() + " is longer than " + std::to_string(max_bytes) + " bytes: not a file khub reads");
    out.append(buf, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return Error(ErrorCode::Io, "read error on " + path.string());
  return out;
}

std::string random_hex8() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^
                                          (static_cast<std::uint64_t>(::getpid()) << 32)};
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(8, '0');
  auto v = rng();
  for (auto& c : out) {
    c = kDigits[v & 15];
    v >>= 4;
  }
  return out;
}

std::string temp_name_suffix() { return "." + std::to_string(::getpid()) + "." + random_hex8() + ".tmp"; }

long temp_name_pid(std::string_view name) noexcept {
  // <name>.<digits>.<8 hex>.tmp
  if (!name.ends_with(".tmp")) return 0;
  name.remove_suffix(4);
  if (name.size() < 9 || name[name.size() - 9] != '.') return 0;
  for (char c : name.substr(name.size() - 8))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
  name.remove_suffix(9);
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == name.size() || name.size() - dot - 1 > 10) return 0;
  long pid = 0;
  for (char c : name.substr(dot + 1)) {
    if (c < '0' || c > '9') return 0;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

namespace {
Status fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return {};  // some filesystems refuse; the rename already happened
  ::fsync(fd);
  ::close(fd);
  return {};
}
}  // namespace

Status write_file_atomic(const fs::path& path, std::string_view content, unsigned mode, const fs::path& staging_dir) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) return Error(ErrorCode::Io, "cannot create " + path.parent_path().string() + ": " + ec.message());
  if (!staging_dir.empty()) fs::create_directories(staging_dir, ec);
  if (ec) return Error(ErrorCode::Io, "cannot create " + staging_dir.string() + ": " + ec.message());
  fs::path tmp = staging_dir.empty() ? fs::path(path) : staging_dir / path.filename();
  tmp += temp_name_suffix();
  const TempFileGuard removed_on_ctrl_c(tmp);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) return Error(ErrorCode::Io, "cannot create " + tmp.string() + ": " + std::strerror(errno));
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      fs::remove(tmp, ec);
      return Error(ErrorCode::Io, "cannot write " + tmp.string() + ": " + std::strerror(err));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    fs::remove(tmp, ec);
    if (err == EXDEV && !staging_dir.empty()) return write_file_atomic(path, content, mode);
    return Error(ErrorCode::Io, "cannot rename " + tmp.string() + " to " + path.string() + ": " + std::strerror(err));
  }
  return fsync_dir(path.has_parent_path() ? path.parent_path() : fs::path("."));
}

Expected<FileLock> FileLock::acquire(const fs::path& path, std::chrono::milliseconds timeout) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) return Error(ErrorCode::Io, "cannot create " + path.parent_path().string() + ": " + ec.message());
  // 0664 whatever the umask, as huggingface_hub's lock files, so users sharing a cache through a
  // group can wait on each other's locks. Another user's lock we may not open only costs the
  // wait: downloads land by atomic rename, so proceed unlocked.
  FileLock lock;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0664);
  if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS)) return lock;
  if (fd < 0) return Error(ErrorCode::Io, "cannot open lock " + path.string() + ": " + std::strerror(errno));
  (void)::fchmod(fd, 0664);  // fails harmlessly on another user's file
  lock.fd_ = fd;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      lock.held_ = true;
      return lock;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return lock;  // unsupported (NFS…): proceed unlocked
    if (std::chrono::steady_clock::now() >= deadline) return lock;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_), held_(other.held_) {
  other.fd_ = -1;
  other.held_ = false;
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    held_ = other.held_;
    other.fd_ = -1;
    other.held_ = false;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace khub
