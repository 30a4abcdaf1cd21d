#include "khub/publish/build_tree.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace khub::publish {
namespace {

namespace fs = std::filesystem;

// Folders of `dir` with a metadata.json; one whose metadata.json is there but unreadable (a
// dangling link, a folder) is an error, not a variant to leave out silently.
Expected<std::vector<VariantDir>> variants_in(const fs::path& dir) {
  std::vector<VariantDir> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_directory(ec)) continue;
    const fs::path metadata = entry.path() / "metadata.json";
    if (fs::is_regular_file(metadata, ec)) {
      out.push_back({entry.path().filename().string(), entry.path()});
    } else if (fs::exists(fs::symlink_status(metadata, ec))) {
      return Error(ErrorCode::InvalidArgument, metadata.string() + " is not a readable file (a dangling link or a folder)",
                   "restore the variant's metadata.json, or remove the variant");
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace

Expected<BuildTree> discover_build(const fs::path& dir) {
  std::error_code ec;
  fs::path root = fs::canonical(dir, ec);
  if (ec) {
    // A path that is not there is the caller's mistake (exit 2); anything else is I/O.
    const bool missing = ec == std::errc::no_such_file_or_directory;
    if (missing) return Error(ErrorCode::InvalidArgument, "build folder " + dir.string() + ": no such file or directory");
    return Error(ErrorCode::Io, "cannot open " + dir.string() + ": " + ec.message());
  }
  if (!fs::is_directory(root, ec)) return Error(ErrorCode::InvalidArgument, dir.string() + " is not a directory");
  BuildTree tree;
  if (fs::is_regular_file(root / "metadata.json", ec)) {
    tree.kernel_dir = root.parent_path().filename() == "build" ? root.parent_path().parent_path() : root.parent_path();
    tree.variants_dir = root.parent_path();
    tree.variants.push_back({root.filename().string(), root});
    return tree;
  }
  tree.kernel_dir = root;
  for (const auto& candidate : {root / "result", root / "build", root}) {
    KHUB_TRY(auto found, variants_in(candidate));
    if (found.empty()) continue;
    tree.variants_dir = candidate;
    tree.variants = std::move(found);
    if (candidate == root && root.filename() == "build") tree.parent_kernel_dir = root.parent_path();
    return tree;
  }
  return Error(ErrorCode::InvalidArgument, "no build variants found in " + dir.string(),
               "expected <dir>/build/<variant>/metadata.json (or <dir>/result/…, <dir>/<variant>/…)");
}

Status require_writable_variants(const BuildTree& tree) {
  for (const auto& v : tree.variants) {
    if (::access(v.path.c_str(), W_OK) != 0)
      return Error(ErrorCode::Io, "cannot write in " + v.path.string() + ": " + std::strerror(errno),
                   "nothing was changed; make every variant folder writable, then run it again");
  }
  return {};
}

Expected<protocol::KernelMetadata> read_variant_metadata(const VariantDir& variant) {
  auto m = protocol::read_metadata(variant.path / "metadata.json");
  if (!m && m.error().code == ErrorCode::InvalidMetadata) {
    Error e = m.error();
    e.code = ErrorCode::InvalidArgument;
    if (e.hint.empty()) e.hint = "fix that metadata.json, or rebuild the variant";
    return e;
  }
  return m;
}

}  // namespace khub::publish
