// Build bundles (`khub push A.tar.zst …`): unpack_bundles (libarchive extraction with its path,
// link and size rules, then the merged build tree) on a temp file. Checks that nothing was written
// beside the destination folder (a link or path escaping it).
#include "fuzz_util.h"
#include "khub/publish/bundle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  const auto root = khub_fuzz::scratch() / "bundle";
  const auto archive = khub_fuzz::scratch() / "in.tar.zst";
  const auto dest = root / "dest";
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(root);
  khub_fuzz::write_file(archive, khub_fuzz::text(data, size));
  khub::publish::ExtractLimits limits{.max_entry_bytes = 1 << 20, .max_total_bytes = 4 << 20, .max_entries = 2000};
  auto tree = khub::publish::unpack_bundles({archive}, dest, limits);
  if (khub_fuzz::verbose()) std::fprintf(stderr, "unpack: %s\n", tree ? "ok" : tree.error().message.c_str());
  for (const auto& e : fs::directory_iterator(root, ec)) {
    if (e.path().filename() != "dest") khub_fuzz::invariant_failed("extraction wrote outside its destination");
  }
  for (const auto& e : fs::directory_iterator(khub_fuzz::scratch(), ec)) {
    auto name = e.path().filename();
    if (name != "bundle" && name != "in.tar.zst") khub_fuzz::invariant_failed("extraction wrote outside its destination");
  }
  fs::remove_all(root, ec);
  return 0;
}
