#include "khub/base/hash.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <sys/stat.h>

#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>

namespace khub {

struct Hasher::Impl {
  EVP_MD_CTX* ctx = nullptr;
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

namespace {
const EVP_MD* md_for(HashAlgorithm a) {
  switch (a) {
    case HashAlgorithm::Sha1: return EVP_sha1();
    case HashAlgorithm::Sha256: return EVP_sha256();
    case HashAlgorithm::Sha512: return EVP_sha512();
  }
  return EVP_sha256();
}
}  // namespace

Hasher::Hasher(HashAlgorithm algorithm) : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(impl_->ctx, md_for(algorithm), nullptr);
}
Hasher::~Hasher() = default;
Hasher::Hasher(Hasher&&) noexcept = default;
Hasher& Hasher::operator=(Hasher&&) noexcept = default;

void Hasher::update(std::span<const std::byte> data) {
  EVP_DigestUpdate(impl_->ctx, data.data(), data.size());
}
void Hasher::update(std::string_view data) { EVP_DigestUpdate(impl_->ctx, data.data(), data.size()); }

std::vector<std::uint8_t> Hasher::finish() {
  std::vector<std::uint8_t> out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, out.data(), &len);
  out.resize(len);
  return out;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (auto b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::vector<std::uint8_t> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return {};
  std::vector<std::uint8_t> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return {};
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return out;
}

std::string base64_encode(std::span<const std::uint8_t> bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

Expected<std::vector<std::uint8_t>> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0)
    return Error(ErrorCode::InvalidArgument, "invalid base64: length " + std::to_string(text.size()) +
                                                 " is not a multiple of 4");
  std::vector<std::uint8_t> out(text.size() / 4 * 3);
  int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return Error(ErrorCode::InvalidArgument, "invalid base64 text");
  std::size_t pad = 0;
  if (!text.empty() && text.back() == '=') ++pad;
  if (text.size() > 1 && text[text.size() - 2] == '=') ++pad;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

std::string sha256_hex(std::string_view data) {
  Hasher h(HashAlgorithm::Sha256);
  h.update(data);
  return to_hex(h.finish());
}

std::string git_blob_sha1_hex(std::string_view data) {
  Hasher h(HashAlgorithm::Sha1);
  std::string header = "blob " + std::to_string(data.size());
  h.update(std::string_view(header.data(), header.size() + 1));  // includes the NUL
  h.update(data);
  return to_hex(h.finish());
}

namespace {
std::atomic<std::uint64_t> file_bytes_read{0};

Status feed_file(const std::filesystem::path& path, Hasher& h) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::Io, "cannot open " + path.string() + " for reading");
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    h.update(std::string_view(buf.data(), static_cast<std::size_t>(in.gcount())));
    file_bytes_read += static_cast<std::uint64_t>(in.gcount());
  }
  if (in.bad()) return Error(ErrorCode::Io, "read error on " + path.string());
  return {};
}

// What identifies a file's content without reading it (HashReuse::Unchanged).
struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  std::int64_t mtime_ns = 0, ctime_ns = 0;
  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

std::optional<FileStamp> stamp_of(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  auto ns = [](const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; };
  return FileStamp{st.st_dev, st.st_ino, st.st_size, ns(st.st_mtim), ns(st.st_ctim)};
}

struct RememberedHash {
  FileStamp stamp;
  HashAlgorithm algorithm;
  std::vector<std::uint8_t> digest;
};

std::mutex& remembered_mutex() {
  static std::mutex m;
  return m;
}
// (device, inode) → the last hash read from that file.
std::map<std::pair<dev_t, ino_t>, RememberedHash>& remembered() {
  static std::map<std::pair<dev_t, ino_t>, RememberedHash> m;
  return m;
}

// A hash is remembered only for a file whose last change is older than a write its stamps could hide:
// 2 s where stamps are whole seconds (or coarser), 250 ms where they carry sub-second parts (ext4, xfs,
// btrfs and tmpfs stamp in clock ticks of at most 10 ms). A freshly built file then costs one read
// per process, not one per step that hashes it.
std::int64_t settle_window_ns(const FileStamp& s) {
  constexpr std::int64_t kSecond = 1'000'000'000;
  const bool sub_second = s.mtime_ns % kSecond != 0 || s.ctime_ns % kSecond != 0;
  return sub_second ? kSecond / 4 : 2 * kSecond;
}

std::int64_t wall_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Expected<std::vector<std::uint8_t>> hash_file(const std::filesystem::path& path, HashAlgorithm algorithm,
                                              HashReuse reuse) {
  std::optional<FileStamp> before;
  std::int64_t started_ns = 0;
  if (reuse == HashReuse::Unchanged) {
    before = stamp_of(path);
    started_ns = wall_clock_ns();
    if (before) {
      std::lock_guard<std::mutex> g(remembered_mutex());
      auto it = remembered().find({before->dev, before->ino});
      if (it != remembered().end() && it->second.stamp == *before && it->second.algorithm == algorithm)
        return it->second.digest;
    }
  }
  Hasher h(algorithm);
  KHUB_CHECK(feed_file(path, h));
  std::vector<std::uint8_t> digest = h.finish();
  if (before && std::max(before->mtime_ns, before->ctime_ns) < started_ns - settle_window_ns(*before) &&
      stamp_of(path) == before) {
    std::lock_guard<std::mutex> g(remembered_mutex());
    remembered()[{before->dev, before->ino}] = RememberedHash{*before, algorithm, digest};
  }
  return digest;
}

std::optional<std::vector<std::uint8_t>> remembered_hash(const std::filesystem::path& path, HashAlgorithm algorithm) {
  const auto now = stamp_of(path);
  if (!now) return std::nullopt;
  std::lock_guard<std::mutex> g(remembered_mutex());
  auto it = remembered().find({now->dev, now->ino});
  if (it == remembered().end() || !(it->second.stamp == *now) || it->second.algorithm != algorithm) return std::nullopt;
  return it->second.digest;
}

std::uint64_t hash_file_bytes_read() noexcept { return file_bytes_read.load(); }

Expected<std::string> git_blob_sha1_file(const std::filesystem::path& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return Error(ErrorCode::Io, "cannot stat " + path.string() + ": " + ec.message());
  Hasher h(HashAlgorithm::Sha1);
  std::string header = "blob " + std::to_string(size);
  h.update(std::string_view(header.data(), header.size() + 1));
  KHUB_CHECK(feed_file(path, h));
  return to_hex(h.finish());
}

bool is_hex(std::string_view text) noexcept {
  if (text.empty()) return false;
  for (char c : text)
    if (hex_value(c) < 0) return false;
  return true;
}

bool is_commit_hash(std::string_view text) noexcept {
  return (text.size() == 40 || text.size() == 64) && is_hex(text);
}

bool secrets_equal(std::string_view a, std::string_view b) noexcept {
  std::array<unsigned char, EVP_MAX_MD_SIZE> da{}, db{};
  unsigned int na = 0, nb = 0;
  if (EVP_Digest(a.data(), a.size(), da.data(), &na, EVP_sha256(), nullptr) != 1 ||
      EVP_Digest(b.data(), b.size(), db.data(), &nb, EVP_sha256(), nullptr) != 1)
    return false;
  return na == nb && CRYPTO_memcmp(da.data(), db.data(), na) == 0;
}

}  // namespace khub
