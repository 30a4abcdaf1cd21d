// khub pack <dir> -o NAME.tar.zst: one deterministic bundle of a build tree (e.g. one per CI matrix
// job), later published together with `khub push A.tar.zst B.tar.zst …`. Needs libarchive.
#if KHUB_HAVE_ARCHIVE
#include <iostream>

#include "command.h"
#include "khub/publish/bundle.h"
#include "khub/publish/check.h"

namespace khub::cli {
namespace {

struct PackOptions {
  std::string dir;
  std::string out;
};

Status run_pack(const PackOptions& opts) {
  KHUB_CHECK(check_output_path("--output", opts.out));
  if (!opts.out.ends_with(".tar.zst"))  // the format it holds, whatever the name says
    return Error(ErrorCode::InvalidArgument, "--output " + opts.out + ": a bundle is a zstd tar",
                 "name it <something>.tar.zst");
  KHUB_TRY(auto tree, publish::discover_build(opts.dir));
  // Fail here, not at the push that unpacks it: what push checks but the ELF modules (push runs
  // those under its --abi-check) — variant names, metadata (its parse errors too), the digest.
  publish::CheckOptions checks;
  checks.abi = false;
  KHUB_TRY(auto report, publish::check_build(tree, checks));
  if (auto clean = publish::require_clean(report, opts.dir); !clean) {
    Error e = std::move(clean).error();
    e.code = ErrorCode::InvalidArgument;  // the build given is not publishable: bad input
    return e;
  }
  KHUB_TRY(auto packed, publish::pack_build(tree, opts.out));
  std::cout << "Packed " << tree.variants.size() << " variant(s), " << packed.files << " file(s), " << packed.bytes
            << " bytes into " << opts.out << '\n';
  return {};
}

void setup_pack(CLI::App& root) {
  auto opts = std::make_shared<PackOptions>();
  auto* cmd = root.add_subcommand("pack", "Bundle a build tree into one .tar.zst for a later khub push");
  cmd->add_option("dir", opts->dir, "kernel dir, build/ or build/<variant>")->required();
  cmd->add_option("-o,--output", opts->out, "bundle to write, e.g. relu-cu130.tar.zst")->required();
  cmd->callback([opts] {
    if (auto st = run_pack(*opts); !st) set_exit_code(report_error(st.error()));
  });
}

}  // namespace
KHUB_REGISTER_COMMAND("pack", setup_pack);
}  // namespace khub::cli
#endif
