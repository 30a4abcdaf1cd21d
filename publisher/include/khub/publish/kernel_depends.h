#pragma once
// `khub push` copies kernel-depends from build.toml into every variant's metadata.json, as
// kernel-builder writes it at build time: [general] kernel-depends, then those of the variant's
// backend table ([general.cuda], [general.xpu], [general.neuron]); always present, possibly [].
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/protocol/build_config.h"
#include "khub/publish/build_tree.h"

namespace khub::publish {

/// build.toml of the directory given to push, else of its parent when a `build` folder was given
/// (BuildTree::parent_kernel_dir). nullopt when neither has one; its error when it does not parse.
[[nodiscard]] Expected<std::optional<protocol::BuildConfig>> find_build_config(const BuildTree& tree);

struct DependsChange {
  std::string variant;
  std::vector<protocol::KernelDependency> before, after;
};

/// Sets each variant's metadata.json kernel-depends to what `config` declares for the variant's
/// backend (metadata backend.type). Only files whose list differs are rewritten (serde pretty form,
/// atomically), and only when `write`; the changes are returned either way. Every metadata.json is
/// read before any is written. A signed variant (metadata.json.sigstore) whose list differs is
/// refused before anything is written: the signature covers the old bytes. Errors: InvalidArgument
/// (a malformed metadata.json; a signed variant to change), Io.
[[nodiscard]] Expected<std::vector<DependsChange>> sync_kernel_depends(const BuildTree& tree,
                                                                       const protocol::BuildConfig& config,
                                                                       bool write);

}  // namespace khub::publish
