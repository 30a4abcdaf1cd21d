// khub sign <dir> --key KEY.pem: writes metadata.json.sigstore (Sigstore bundle, v0.3) next to each
// variant's metadata.json. Run after `khub hash`, before `khub push`. --public-key-out writes the
// matching public key for verifiers (trusted keys of the loader).
#include <iostream>

#include "command.h"
#include "khub/base/fs.h"
#include "khub/publish/sign.h"

namespace khub::cli {
namespace {

struct SignOptions {
  std::string dir;
  std::string key;
  std::string public_key_out;
};

Status run_sign(const SignOptions& opts) {
  KHUB_CHECK(check_input_file("--key", opts.key));
  KHUB_TRY(auto tree, publish::discover_build(opts.dir));
  if (!opts.public_key_out.empty()) {  // first: a bad path must fail before any bundle is written
    KHUB_CHECK(check_output_path("--public-key-out", opts.public_key_out));
    KHUB_TRY(auto pem, publish::public_key_pem_of(opts.key));
    KHUB_CHECK(write_file_atomic(opts.public_key_out, pem));
  }
  KHUB_TRY(auto result, publish::sign_build(tree, opts.key));
  for (const auto& v : result.variants) std::cout << v << ": signed (key " << result.key_hint << ")\n";
  return {};
}

void setup_sign(CLI::App& root) {
  auto opts = std::make_shared<SignOptions>();
  auto* cmd = root.add_subcommand("sign", "Sign each variant's metadata.json (metadata.json.sigstore)");
  cmd->add_option("dir", opts->dir, "kernel dir, build/ or build/<variant>")->required();
  cmd->add_option("--key", opts->key, "PEM private key: ECDSA P-256 or Ed25519")->required();
  cmd->add_option("--public-key-out", opts->public_key_out, "also write the PEM public key here");
  cmd->callback([opts] {
    if (auto st = run_sign(*opts); !st) set_exit_code(report_error(st.error()));
  });
}

}  // namespace
KHUB_REGISTER_COMMAND("sign", setup_sign);
}  // namespace khub::cli
