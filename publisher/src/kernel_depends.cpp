#include "khub/publish/kernel_depends.h"

namespace khub::publish {
namespace fs = std::filesystem;

Expected<std::optional<protocol::BuildConfig>> find_build_config(const BuildTree& tree) {
  for (const fs::path& dir : {tree.kernel_dir, tree.parent_kernel_dir}) {
    std::error_code ec;
    if (dir.empty() || !fs::exists(dir / "build.toml", ec)) continue;
    KHUB_TRY(auto config, protocol::read_build_config(dir / "build.toml"));
    return std::optional<protocol::BuildConfig>(std::move(config));
  }
  return std::optional<protocol::BuildConfig>{};
}

Expected<std::vector<DependsChange>> sync_kernel_depends(const BuildTree& tree, const protocol::BuildConfig& config,
                                                         bool write) {
  std::vector<std::pair<const VariantDir*, protocol::KernelMetadata>> updates;
  std::vector<DependsChange> changes;
  for (const auto& v : tree.variants) {
    KHUB_TRY(auto metadata, read_variant_metadata(v));
    auto wanted = config.kernel_depends_for(protocol::to_string(metadata.backend.type));
    if (wanted == metadata.kernel_depends) continue;
    std::error_code ec;
    if (fs::exists(v.path / "metadata.json.sigstore", ec))
      return Error(ErrorCode::InvalidArgument,
                   v.name + "/metadata.json: its kernel-depends differ from build.toml, and metadata.json.sigstore "
                            "signs the file as it is",
                   "rebuild the variant, or remove the signature, push once to write kernel-depends, and sign again")
          .note("metadata.json: " + std::to_string(metadata.kernel_depends.size()) + " entries; build.toml: " +
                std::to_string(wanted.size()));
    changes.push_back({v.name, metadata.kernel_depends, wanted});
    metadata.kernel_depends = std::move(wanted);
    updates.emplace_back(&v, std::move(metadata));
  }
  if (!write || updates.empty()) return changes;
  KHUB_CHECK(require_writable_variants(tree));
  for (const auto& [variant, metadata] : updates) KHUB_CHECK(protocol::write_metadata(variant->path / "metadata.json", metadata));
  return changes;
}

}  // namespace khub::publish
