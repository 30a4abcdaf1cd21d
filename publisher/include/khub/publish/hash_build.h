#pragma once
// `khub hash`: writes each variant's digest into its metadata.json, as `kernel-builder hash` does
// (kernel-builder's pipeline: strip → drop __pycache__ → digest → sign → upload).
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/protocol/metadata.h"
#include "khub/publish/build_tree.h"

namespace khub::publish {

struct HashedVariant {
  std::string name;
  std::size_t files = 0;  // entries in the digest
  bool changed = false;   // metadata.json bytes differ from before
};

/// Reads every variant's metadata first (so a bad file stops the run before anything is written),
/// then hashes each variant and rewrites metadata.json (serde pretty form, atomically). A variant
/// whose file already holds the same bytes is left untouched. Errors: InvalidMetadata, Io.
[[nodiscard]] Expected<std::vector<HashedVariant>> write_digests(
    const BuildTree& tree, protocol::DigestAlgorithm algorithm = protocol::DigestAlgorithm::Sha256);

}  // namespace khub::publish
