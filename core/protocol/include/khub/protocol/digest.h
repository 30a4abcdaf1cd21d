#pragma once
// Variant digests (kernels-data `digest.rs`): Base64 SHA-256/512 of every file
// of a variant directory except depth-1 `metadata.json` / `metadata.json.sigstore`, `__pycache__`
// and `*.pyc`; keys are `/`-separated relative paths, sorted bytewise.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/base/hash.h"
#include "khub/protocol/metadata.h"

namespace khub::protocol {

/// Answers, for a file (its path and its key), the digest entry to take for it without reading it;
/// nullopt: read it. khub push lets large files through this way and confirms them as it uploads
/// them (khub/publish/digest_claims.h).
using DigestClaim = std::function<std::optional<std::string>(const std::filesystem::path& file, const std::string& key)>;

/// Hashes `variant_dir`. Directory symlinks are not followed; symlinked files are hashed by their
/// target's bytes. Returns Io for unreadable files, dangling symlinks or a missing directory.
/// `reuse` as for hash_file (khub/base/hash.h).
[[nodiscard]] Expected<Digest> compute_digest(const std::filesystem::path& variant_dir,
                                              DigestAlgorithm algorithm = DigestAlgorithm::Sha256,
                                              HashReuse reuse = HashReuse::Never, const DigestClaim& claim = {});

/// True when a relative path (with `/`) takes part in the digest.
[[nodiscard]] bool is_digested_path(std::string_view relative_path) noexcept;

/// Python bytecode cache, which no digest covers: a path with a folder named exactly `__pycache__`
/// or whose file name has the extension `pyc` as Rust's `Path::extension` reads it (`a.pyc` has,
/// `.pyc` and `foo__pycache__/` do not; kernels-data `digest.rs`).
[[nodiscard]] bool is_bytecode_cache(std::string_view relative_path) noexcept;

enum class DigestViolationKind { AlgorithmMismatch, MissingFile, HashMismatch, UnknownFile };

struct DigestViolation {
  DigestViolationKind kind = DigestViolationKind::MissingFile;
  std::string path;      // empty for AlgorithmMismatch
  std::string expected;  // hash, or `SHA256`/`SHA512` for AlgorithmMismatch
  std::string got;
  friend bool operator==(const DigestViolation&, const DigestViolation&) = default;
  /// Upstream text: `Algorithm mismatch: expected: SHA256, got: SHA512`, `Missing file: <p>`,
  /// `File hash mismatch for <p>: expected: <e>, got: <g>`, `Unknown file: <p>`.
  [[nodiscard]] std::string describe() const;
};

/// Compares `actual` against `expected` and lists every violation, in upstream's order: algorithm,
/// then each expected path in key order (missing or mismatched), then each unknown actual path.
/// Empty when they match.
[[nodiscard]] std::vector<DigestViolation> compare_digests(const Digest& expected, const Digest& actual);

/// Recomputes the digest of `variant_dir` with `expected.algorithm` and compares. Returns Integrity
/// with message `kernel does not match the expected digest:\n<violations joined by \n>`, or Io
/// from hashing.
[[nodiscard]] Status verify_digest(const std::filesystem::path& variant_dir, const Digest& expected,
                                   HashReuse reuse = HashReuse::Never, const DigestClaim& claim = {});

}  // namespace khub::protocol
