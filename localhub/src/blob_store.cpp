#include "khub/localhub/blob_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>

namespace khub::localhub {
namespace fs = std::filesystem;

namespace {
std::string unique_suffix() {
  static std::atomic<std::uint64_t> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}());
  std::ostringstream out;
  out << getpid() << '.' << counter++ << '.' << std::hex << rng();
  return out.str();
}

Error io_error(const std::string& what, int err) {
  return Error(ErrorCode::Io, what + ": " + std::strerror(err));
}

bool fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}
}  // namespace

BlobStore::BlobStore(fs::path root) : root_(std::move(root)) {
  std::error_code ec;
  fs::create_directories(root_ / "blobs", ec);
  fs::create_directories(tmp_dir(), ec);
  fs::create_directories(upload_dir(), ec);
}

BlobStore::Writer::Writer(BlobStore* store, fs::path tmp, int fd)
    : store_(store), tmp_(std::move(tmp)), fd_(fd), hasher_(std::make_unique<Hasher>(HashAlgorithm::Sha256)) {}

BlobStore::Writer::Writer(Writer&& o) noexcept
    : store_(o.store_),
      tmp_(std::move(o.tmp_)),
      fd_(o.fd_),
      size_(o.size_),
      hasher_(std::move(o.hasher_)),
      write_back_(o.write_back_) {
  o.fd_ = -1;
  o.tmp_.clear();
}

BlobStore::Writer& BlobStore::Writer::operator=(Writer&& o) noexcept {
  std::swap(store_, o.store_);
  std::swap(tmp_, o.tmp_);
  std::swap(fd_, o.fd_);
  std::swap(size_, o.size_);
  std::swap(hasher_, o.hasher_);
  std::swap(write_back_, o.write_back_);
  return *this;
}

BlobStore::Writer::~Writer() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) {
    std::error_code ec;
    fs::remove(tmp_, ec);
  }
}

Status BlobStore::Writer::write(std::string_view data) {
  if (fd_ < 0) return Error(ErrorCode::Io, "blob writer is closed");
  hasher_->update(data);
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("write " + tmp_.string(), errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  size_ += data.size();
  write_back_.advance(fd_, size_);
  return {};
}

Expected<BlobInfo> BlobStore::Writer::close(std::string_view expected_sha256,
                                            std::optional<std::uint64_t> expected_size, bool sync) {
  if (fd_ < 0) return Error(ErrorCode::Io, "blob writer is closed");
  BlobInfo info{to_hex(hasher_->finish()), size_};
  if (expected_size && *expected_size != size_) {
    return Error(ErrorCode::Integrity, "size mismatch: expected " + std::to_string(*expected_size) + " bytes, got " +
                                           std::to_string(size_));
  }
  if (!expected_sha256.empty() && expected_sha256 != info.sha256) {
    return Error(ErrorCode::Integrity,
                 "sha256 mismatch: expected " + std::string(expected_sha256) + ", got " + info.sha256);
  }
  if (sync && ::fsync(fd_) != 0) return io_error("fsync " + tmp_.string(), errno);
  if (::close(fd_) != 0) {
    fd_ = -1;
    return io_error("close " + tmp_.string(), errno);
  }
  fd_ = -1;
  return info;
}

Status BlobStore::Writer::publish(const BlobInfo& info, bool sync_dir) {
  auto dest = store_->path_of(info.sha256);
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  if (fs::exists(dest, ec)) {  // same content already stored; the destructor drops tmp
    store_->touch(info.sha256);
    return {};
  }
  if (::rename(tmp_.c_str(), dest.c_str()) != 0) return io_error("rename to " + dest.string(), errno);
  tmp_.clear();
  if (sync_dir) fsync_dir(dest.parent_path());
  return {};
}

Expected<BlobInfo> BlobStore::Writer::commit(std::string_view expected_sha256,
                                             std::optional<std::uint64_t> expected_size) {
  KHUB_TRY(auto info, close(expected_sha256, expected_size, true));
  KHUB_CHECK(publish(info, true));
  return info;
}

Expected<BlobInfo> BlobStore::Batch::put(std::string_view data) {
  KHUB_TRY(auto writer, store_->begin());
  KHUB_CHECK(writer.write(data));
  KHUB_TRY(auto info, writer.close({}, {}, false));
  pending_.emplace_back(std::move(writer), info);
  return info;
}

Status BlobStore::Writer::sync_closed() const {
  const int fd = ::open(tmp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("open " + tmp_.string(), errno);
  const bool ok = ::fsync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) return io_error("fsync " + tmp_.string(), error);
  return {};
}

Status BlobStore::Batch::commit() {
  if (pending_.empty()) return {};
  constexpr std::size_t kFsyncEachUpTo = 16;
  if (pending_.size() <= kFsyncEachUpTo) {
    Status st;
    for (auto& [writer, info] : pending_)
      if (st) st = writer.sync_closed();  // every temp file's bytes on disk before any name points at them
    for (auto& [writer, info] : pending_)
      if (st) st = writer.publish(info, true);
    pending_.clear();
    return st;
  }
  // syncfs needs any descriptor on the file system; the store's root folder is one.
  int fd = ::open(store_->tmp_dir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("open " + store_->tmp_dir().string(), errno);
  auto sync = [&]() -> Status {
    if (::syncfs(fd) != 0) return io_error("syncfs " + store_->tmp_dir().string(), errno);
    return {};
  };
  Status st = sync();  // every temp file's bytes on disk before any name points at them
  for (auto& [writer, info] : pending_) {
    if (!st) break;
    st = writer.publish(info, false);
  }
  if (st) st = sync();  // and the new names
  ::close(fd);
  pending_.clear();
  return st;
}

Expected<BlobStore::Writer> BlobStore::begin() {
  auto tmp = tmp_dir() / ("blob." + unique_suffix() + ".tmp");
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("create " + tmp.string(), errno);
  return Writer(this, tmp, fd);
}

Expected<BlobInfo> BlobStore::put(std::string_view data) {
  KHUB_TRY(auto writer, begin());
  KHUB_CHECK(writer.write(data));
  return writer.commit();
}

fs::path BlobStore::path_of(std::string_view sha256) const {
  std::string s(sha256);
  return root_ / "blobs" / s.substr(0, 2) / s;
}

void BlobStore::touch(std::string_view sha256) const {
  if (contains(sha256)) ::utimensat(AT_FDCWD, path_of(sha256).c_str(), nullptr, 0);
}

bool BlobStore::contains(std::string_view sha256) const {
  if (sha256.size() != 64 || !is_hex(sha256)) return false;
  std::error_code ec;
  return fs::is_regular_file(path_of(sha256), ec);
}

std::optional<std::uint64_t> BlobStore::size_of(std::string_view sha256) const {
  if (!contains(sha256)) return std::nullopt;
  std::error_code ec;
  auto n = fs::file_size(path_of(sha256), ec);
  if (ec) return std::nullopt;
  return n;
}

Expected<std::string> BlobStore::read(std::string_view sha256) const {
  std::ifstream in(path_of(sha256), std::ios::binary);
  if (!in) return Error(ErrorCode::Io, "blob " + std::string(sha256) + " is missing");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void BlobStore::remove_leftovers() {
  std::error_code ec;
  for (const auto& dir : {tmp_dir(), upload_dir()}) {
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
  }
}

}  // namespace khub::localhub
