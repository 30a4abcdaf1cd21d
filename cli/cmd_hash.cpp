// khub hash <build/|build/<variant>>: writes each variant's digest into its metadata.json, byte for
// byte what `kernel-builder hash` writes. Exit 0 ok, 1 failure, 2 bad input.
#include <iostream>

#include "command.h"
#include "khub/publish/hash_build.h"

namespace khub::cli {
namespace {

struct HashOptions {
  std::string dir;
  std::string algorithm = "sha256";
};

Status run_hash(const HashOptions& opts) {
  KHUB_TRY(auto tree, publish::discover_build(opts.dir));
  auto algorithm = opts.algorithm == "sha512" ? protocol::DigestAlgorithm::Sha512 : protocol::DigestAlgorithm::Sha256;
  KHUB_TRY(auto hashed, publish::write_digests(tree, algorithm));
  for (const auto& h : hashed) {
    std::cout << h.name << ": " << h.files << " file(s)" << (h.changed ? ", metadata.json updated" : ", unchanged")
              << '\n';
  }
  return {};
}

void setup_hash(CLI::App& root) {
  auto opts = std::make_shared<HashOptions>();
  auto* cmd = root.add_subcommand("hash", "Write the digest of each build variant into its metadata.json");
  cmd->add_option("dir", opts->dir, "kernel dir, build/ or build/<variant>")->required();
  cmd->add_option("--algorithm", opts->algorithm, "sha256 (default) or sha512")
      ->check(CLI::IsMember({"sha256", "sha512"}));
  cmd->callback([opts] {
    if (auto st = run_hash(*opts); !st) set_exit_code(report_error(st.error()));
  });
}

}  // namespace
KHUB_REGISTER_COMMAND("hash", setup_hash);
}  // namespace khub::cli
