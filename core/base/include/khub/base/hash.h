#pragma once
// Content hashes used by the Hub and by kernel-builder: sha256 (LFS oids, digests), the git blob
// sha1 of regular files, and standard Base64 with padding (metadata.json digests).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"

namespace khub {

enum class HashAlgorithm { Sha1, Sha256, Sha512 };

/// Whether hash_file may answer from what it read before in this process.
///  Never: read every byte (`khub verify`).
///  Unchanged: reuse a file's hash while its device, inode, size, mtime and ctime are as they were
///    when it was read (any write to a file changes its ctime). A file changed less than 2 s
///    before it was read is not remembered: timestamps can be that coarse (FAT, some NFS servers),
///    and a second write in the same tick would not show. get_kernel's warm calls use this, and
///    khub push, so that its check, its plan and its Xet scan read each file's sha256 once.
enum class HashReuse { Never, Unchanged };

/// Incremental hasher; feed bytes with update(), read the raw digest once with finish().
class Hasher {
 public:
  explicit Hasher(HashAlgorithm algorithm);
  ~Hasher();
  Hasher(Hasher&&) noexcept;
  Hasher& operator=(Hasher&&) noexcept;
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void update(std::span<const std::byte> data);
  void update(std::string_view data);
  [[nodiscard]] std::vector<std::uint8_t> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

[[nodiscard]] std::string to_hex(std::span<const std::uint8_t> bytes);
/// Decodes lower- or upper-case hex; empty on odd length or a non-hex character.
[[nodiscard]] std::vector<std::uint8_t> from_hex(std::string_view hex);
[[nodiscard]] std::string base64_encode(std::span<const std::uint8_t> bytes);
[[nodiscard]] Expected<std::vector<std::uint8_t>> base64_decode(std::string_view text);

[[nodiscard]] std::string sha256_hex(std::string_view data);
/// sha1("blob <len>\0" + data): the id git gives a regular file.
[[nodiscard]] std::string git_blob_sha1_hex(std::string_view data);

/// Streams a file through the hasher; returns the raw digest or Io.
[[nodiscard]] Expected<std::vector<std::uint8_t>> hash_file(const std::filesystem::path& path,
                                                            HashAlgorithm algorithm,
                                                            HashReuse reuse = HashReuse::Never);
/// The digest hash_file(path, algorithm, HashReuse::Unchanged) would return without reading the
/// file, when it remembers one for the file as it is now; nullopt otherwise (nothing is read).
[[nodiscard]] std::optional<std::vector<std::uint8_t>> remembered_hash(const std::filesystem::path& path,
                                                                      HashAlgorithm algorithm);
/// Bytes hash_file and git_blob_sha1_file have read in this process (diagnostics; the tests see
/// HashReuse work with it).
[[nodiscard]] std::uint64_t hash_file_bytes_read() noexcept;
/// Git blob sha1 of a file's content, hex.
[[nodiscard]] Expected<std::string> git_blob_sha1_file(const std::filesystem::path& path);

[[nodiscard]] bool is_hex(std::string_view text) noexcept;
/// Compares secrets (tokens) in time independent of where they differ and of their lengths: the
/// SHA-256 digests of both are compared with CRYPTO_memcmp.
[[nodiscard]] bool secrets_equal(std::string_view a, std::string_view b) noexcept;
/// True for 40 hex characters (a git sha1) or 64 (a sha256).
[[nodiscard]] bool is_commit_hash(std::string_view text) noexcept;

}  // namespace khub
