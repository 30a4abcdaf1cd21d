#pragma once
// Build bundles: `khub pack` writes a build tree as one deterministic `.tar.zst` (libarchive), and
// `khub push A.tar.zst B.tar.zst …` unpacks several of them (e.g. one per CI matrix job) into one
// tree. Extraction is defensive: the archive comes from another machine. Only when KHUB_HAVE_ARCHIVE.
#include <cstdint>
#include <filesystem>
#include <vector>

#include "khub/base/error.h"
#include "khub/publish/build_tree.h"

namespace khub::publish {

struct PackResult {
  std::size_t files = 0;
  std::uint64_t bytes = 0;  // uncompressed content
};

/// Writes `build/<variant>/…` of every variant (symlinked files as their target bytes, no
/// `__pycache__`/`*.pyc`), `build/CARD.md` and `benchmarks/benchmark*.py` when present, sorted,
/// with zeroed owners and times and modes 0644/0755, into `out` (tar, zstd). Written to a temp
/// sibling and renamed, so a failure leaves no partial archive. Errors: Io.
[[nodiscard]] Expected<PackResult> pack_build(const BuildTree& tree, const std::filesystem::path& out);

struct ExtractLimits {
  std::uint64_t max_entry_bytes = 8ull << 30;   // one file
  std::uint64_t max_total_bytes = 64ull << 30;  // whole archive
  std::size_t max_entries = 200000;
};

/// Extracts `archive` under `dest` (created if needed). Refused (InvalidArgument, naming the entry):
/// absolute paths, `..` components, symlinks or hard links whose target leaves `dest`, device files,
/// FIFOs and sockets, entries or totals above the limits, a variant file (`build/<variant>/…`) that
/// already exists under `dest` (the same variant in two bundles), and a shared file (`build/CARD.md`,
/// `benchmarks/…`) that exists with other bytes. Io on read/write failure. On error, files written
/// so far stay under `dest`; callers extract into a temporary directory.
[[nodiscard]] Status extract_bundle(const std::filesystem::path& archive, const std::filesystem::path& dest,
                                    const ExtractLimits& limits = {});

/// Extracts every bundle into `dest` and returns the merged build tree (`dest/build/<variant>`).
[[nodiscard]] Expected<BuildTree> unpack_bundles(const std::vector<std::filesystem::path>& archives,
                                                 const std::filesystem::path& dest, const ExtractLimits& limits = {});

}  // namespace khub::publish
