#pragma once
// A kernel build on disk: the directory holding `build/<variant>/metadata.json` trees, found the way
// `kernel-builder upload` finds it (hub-protocol.md §7.7 step 1).
#include <filesystem>
#include <string>
#include <vector>

#include "khub/base/error.h"

namespace khub::publish {

struct VariantDir {
  std::string name;             // directory name, e.g. torch212-cxx11-cu130-x86_64-linux
  std::filesystem::path path;   // absolute
};

struct BuildTree {
  std::filesystem::path kernel_dir;    // the directory given (canonical); holds CARD.md, benchmarks/, build.toml
  std::filesystem::path variants_dir;  // the directory whose subdirectories are the variants
  std::vector<VariantDir> variants;    // sorted by name
};

/// Candidates in order `DIR/result`, `DIR/build`, `DIR`: the first with at least one subdirectory
/// holding `metadata.json` wins. A `DIR` that itself holds `metadata.json` is a single variant
/// (`khub hash build/<variant>`). Returns InvalidArgument `no build variants found in <dir>` or Io.
[[nodiscard]] Expected<BuildTree> discover_build(const std::filesystem::path& dir);

}  // namespace khub::publish
