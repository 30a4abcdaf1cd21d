#include "khub/protocol/digest.h"

#include "khub/base/hash.h"

namespace khub::protocol {
namespace {

namespace fs = std::filesystem;

std::string algorithm_label(DigestAlgorithm a) { return a == DigestAlgorithm::Sha256 ? "SHA256" : "SHA512"; }

}  // namespace

bool is_bytecode_cache(std::string_view rel) noexcept {
  std::size_t start = 0;
  std::string_view name;
  while (start <= rel.size()) {
    auto end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    name = rel.substr(start, end - start);
    if (name == "__pycache__") return true;
    start = end + 1;
  }
  const auto dot = name.rfind('.');
  return dot != std::string_view::npos && dot > 0 && name.substr(dot + 1) == "pyc";
}

bool is_digested_path(std::string_view rel) noexcept {
  if (rel == "metadata.json" || rel == "metadata.json.sigstore") return false;
  return !is_bytecode_cache(rel);
}

Expected<Digest> compute_digest(const fs::path& variant_dir, DigestAlgorithm algorithm, HashReuse reuse,
                                const DigestClaim& claim) {
  Digest out;
  out.algorithm = algorithm;
  std::error_code ec;
  if (!fs::is_directory(variant_dir, ec)) {
    return Error(ErrorCode::Io, "not a directory: " + variant_dir.string());
  }
  fs::recursive_directory_iterator it(variant_dir, fs::directory_options::none, ec), end;
  if (ec) return Error(ErrorCode::Io, "cannot read " + variant_dir.string() + ": " + ec.message());
  const auto hash_algo = algorithm == DigestAlgorithm::Sha256 ? HashAlgorithm::Sha256 : HashAlgorithm::Sha512;
  for (; it != end; it.increment(ec)) {
    if (ec) return Error(ErrorCode::Io, "cannot read " + variant_dir.string() + ": " + ec.message());
    const auto& entry = *it;
    const std::string rel = entry.path().lexically_relative(variant_dir).generic_string();
    if (entry.path().filename() == "__pycache__" && entry.is_directory()) {
      it.disable_recursion_pending();
      continue;
    }
    if (entry.is_symlink(ec) && !fs::exists(entry.path(), ec)) {
      return Error(ErrorCode::Io, "dangling symlink: " + entry.path().string());
    }
    if (!entry.is_regular_file(ec)) continue;  // directories (and symlinks to them: not followed)
    if (!is_digested_path(rel)) continue;
    if (auto claimed = claim ? claim(entry.path(), rel) : std::nullopt) {
      out.files[rel] = std::move(*claimed);
      continue;
    }
    KHUB_TRY(auto raw, hash_file(entry.path(), hash_algo, reuse));
    out.files[rel] = base64_encode(raw);
  }
  return out;
}

std::string DigestViolation::describe() const {
  switch (kind) {
    case DigestViolationKind::AlgorithmMismatch:
      return "Algorithm mismatch: expected: " + expected + ", got: " + got;
    case DigestViolationKind::MissingFile: return "Missing file: " + path;
    case DigestViolationKind::HashMismatch:
      return "File hash mismatch for " + path + ": expected: " + expected + ", got: " + got;
    case DigestViolationKind::UnknownFile: return "Unknown file: " + path;
  }
  return {};
}

std::vector<DigestViolation> compare_digests(const Digest& expected, const Digest& actual) {
  std::vector<DigestViolation> out;
  if (expected.algorithm != actual.algorithm) {
    out.push_back({DigestViolationKind::AlgorithmMismatch, "", algorithm_label(expected.algorithm),
                   algorithm_label(actual.algorithm)});
  }
  for (const auto& [path, hash] : expected.files) {
    auto it = actual.files.find(path);
    if (it == actual.files.end()) {
      out.push_back({DigestViolationKind::MissingFile, path, "", ""});
    } else if (it->second != hash) {
      out.push_back({DigestViolationKind::HashMismatch, path, hash, it->second});
    }
  }
  for (const auto& [path, hash] : actual.files) {
    if (!expected.files.contains(path)) out.push_back({DigestViolationKind::UnknownFile, path, "", ""});
  }
  return out;
}

Status verify_digest(const fs::path& variant_dir, const Digest& expected, HashReuse reuse, const DigestClaim& claim) {
  KHUB_TRY(auto actual, compute_digest(variant_dir, expected.algorithm, reuse, claim));
  auto violations = compare_digests(expected, actual);
  if (violations.empty()) return {};
  std::string message = "kernel does not match the expected digest:";
  for (const auto& v : violations) message += "\n" + v.describe();
  return Error(ErrorCode::Integrity, std::move(message));
}

}  // namespace khub::protocol
