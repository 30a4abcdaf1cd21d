#include "digest_claims.h"

#include <sys/stat.h>

#include <ctime>

#include "khub/base/hash.h"

namespace khub::publish::detail {
namespace {

namespace fs = std::filesystem;

bool later(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

}  // namespace

protocol::DigestClaim claim_rule(const fs::path& variant_dir, const protocol::Digest& digest) {
  struct stat metadata {};
  if (digest.algorithm != protocol::DigestAlgorithm::Sha256 ||
      ::stat((variant_dir / "metadata.json").c_str(), &metadata) != 0) {
    return {};
  }
  return [files = digest.files, written = metadata.st_mtim](const fs::path& file,
                                                            const std::string& key) -> std::optional<std::string> {
    const auto entry = files.find(key);
    struct stat s {};
    if (entry == files.end() || ::stat(file.c_str(), &s) != 0 || !S_ISREG(s.st_mode)) return std::nullopt;
    if (static_cast<std::uint64_t>(s.st_size) < kGitSha1MaxSize) return std::nullopt;
    if (later(s.st_mtim, written) || later(s.st_ctim, written)) return std::nullopt;
    // Only a well-formed sha256 is a claim: any other entry is compared with the file's hash, and fails.
    if (auto raw = base64_decode(entry->second); !raw || raw->size() != 32) return std::nullopt;
    return entry->second;
  };
}

Error claim_broken(const LocalFile& file, std::string_view actual_sha256_hex) {
  // repo_path is build/<variant>/<key>; the digest names files by key, in Base64.
  const std::string_view path = file.repo_path;
  const auto slash = path.find('/', 6);
  const std::string variant(path.substr(6, slash - 6));
  const std::string key(path.substr(slash + 1));
  const auto base64 = [](std::string_view hex) { return base64_encode(from_hex(hex)); };
  fs::path build = file.source;
  for (auto depth = std::count(key.begin(), key.end(), '/') + 2; depth > 0; --depth) build = build.parent_path();
  return Error(ErrorCode::InvalidMetadata, "build check failed: 1 problem(s) in 1 variant(s)",
               "run `khub hash " + build.string() + "` after the last change to a variant")
      .note(variant + ": " +
            protocol::DigestViolation{protocol::DigestViolationKind::HashMismatch, key, base64(file.sha256),
                                      base64(actual_sha256_hex)}
                .describe());
}

Status confirm_claim(const LocalFile& file) {
  if (!file.sha256_claimed) return {};
  KHUB_TRY(auto sha, hash_file(file.source, HashAlgorithm::Sha256, HashReuse::Unchanged));
  if (const auto actual = to_hex(sha); actual != file.sha256) return claim_broken(file, actual);
  return {};
}

}  // namespace khub::publish::detail
