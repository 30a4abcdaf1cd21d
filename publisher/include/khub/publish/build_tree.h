#pragma once
// A kernel build on disk: the directory holding `build/<variant>/metadata.json` trees, found the way
// `kernel-builder upload` finds it: the first of DIR/result, DIR/build, DIR with such a subdirectory.
#include <filesystem>
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/protocol/metadata.h"

namespace khub::publish {

struct VariantDir {
  std::string name;             // directory name, e.g. torch212-cxx11-cu130-x86_64-linux
  std::filesystem::path path;   // absolute
};

struct BuildTree {
  std::filesystem::path kernel_dir;    // the directory given (canonical); holds benchmarks/, build.toml
  /// For a folder named `build` given itself: its parent, whose build.toml supplies the repo id when
  /// --repo is absent (khub's addition: kernel-builder then fails). Branch and benchmarks still come
  /// from the folder given, as kernel-builder takes them.
  std::filesystem::path parent_kernel_dir;
  std::filesystem::path variants_dir;  // the directory whose subdirectories are the variants
  std::vector<VariantDir> variants;    // sorted by name
};

/// Candidates in order `DIR/result`, `DIR/build`, `DIR`: the first with at least one subdirectory
/// holding `metadata.json` wins. A `DIR` that itself holds `metadata.json` is a single variant
/// (`khub hash build/<variant>`). Returns InvalidArgument (`no build variants found in <dir>`, a
/// missing path) or Io.
[[nodiscard]] Expected<BuildTree> discover_build(const std::filesystem::path& dir);

/// Io when any variant folder cannot be written, before a command that writes into each of them
/// (hash, sign) changes the first: all of them or none.
[[nodiscard]] Status require_writable_variants(const BuildTree& tree);

/// The variant's metadata.json. A malformed one is InvalidArgument (the build's own file: bad input,
/// exit 2), where the client's read of a downloaded one is InvalidMetadata.
[[nodiscard]] Expected<protocol::KernelMetadata> read_variant_metadata(const VariantDir& variant);

}  // namespace khub::publish
