#include "khub/publish/hash_build.h"

#include <fstream>
#include <sstream>

#include "khub/protocol/digest.h"

namespace khub::publish {

Expected<std::vector<HashedVariant>> write_digests(const BuildTree& tree, protocol::DigestAlgorithm algorithm) {
  std::vector<protocol::KernelMetadata> metadata;
  for (const auto& v : tree.variants) {
    KHUB_TRY(auto m, read_variant_metadata(v));
    metadata.push_back(std::move(m));
  }
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < tree.variants.size(); ++i) {
    KHUB_TRY(metadata[i].digest, protocol::compute_digest(tree.variants[i].path, algorithm));
    texts.push_back(protocol::serialize_metadata(metadata[i]));
  }
  KHUB_CHECK(require_writable_variants(tree));
  std::vector<HashedVariant> out;
  for (std::size_t i = 0; i < tree.variants.size(); ++i) {
    const auto path = tree.variants[i].path / "metadata.json";
    std::ifstream in(path, std::ios::binary);
    std::ostringstream old;
    old << in.rdbuf();
    bool changed = old.str() != texts[i];
    if (changed) KHUB_CHECK(protocol::write_metadata(path, metadata[i]));
    out.push_back({tree.variants[i].name, metadata[i].digest->files.size(), changed});
  }
  return out;
}

}  // namespace khub::publish
