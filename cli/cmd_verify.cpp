// khub verify REPO: re-checks cached variants without any HTTP — every blob against its etag and the
// metadata.json digest, and with --signature each variant's metadata.json.sigstore (as
// `kernels verify-signature`). Exit 0 when all match, 1 naming each mismatching file, 2 on usage errors.
#include <nlohmann/json.hpp>

#include "hub_cli.h"
#include "khub/base/fs.h"
#include "khub/hub/download.h"
#include "khub/hub/kernel_fetch.h"
#include "khub/hub/project.h"
#include "khub/signing/signature.h"

namespace khub::cli {
namespace {

struct VerifyOptions {
  std::string repo;
  std::vector<std::string> variants;
  HubFlags hub;
  bool signature = false;
  std::vector<std::string> trusted_keys;       // PEM files
  std::vector<std::string> trusted_workflows;  // https://github.com/ORG/REPO/.github/workflows/F@REF
  std::string sigstore_root;                   // trusted_root.json; empty: the public-good root
};

// The repository of a workflow URI: https://github.com/ORG/REPO/.github/workflows/FILE@REF → ORG/REPO.
Expected<signing::GitHubWorkflowIdentity> workflow_identity(const std::string& uri) {
  constexpr std::string_view kPrefix = "https://github.com/";
  const size_t workflows = uri.find("/.github/workflows/");
  if (!uri.starts_with(kPrefix) || workflows == std::string::npos || uri.find('@', workflows) == std::string::npos) {
    return Error(ErrorCode::InvalidArgument, "--trusted-workflow '" + uri + "' is not a GitHub workflow URI",
                 "use https://github.com/ORG/REPO/.github/workflows/FILE@REF, e.g. "
                 "https://github.com/huggingface/kernels-community/.github/workflows/build.yaml@refs/heads/main");
  }
  return signing::GitHubWorkflowIdentity{uri.substr(kPrefix.size(), workflows - kPrefix.size()), {uri}};
}

Expected<signing::SignatureTrust> signature_trust(const VerifyOptions& opts,
                                                   std::optional<signing::SigstoreTrustRoot>& root) {
  signing::SignatureTrust trust;
  for (const auto& file : opts.trusted_keys) {
    KHUB_CHECK(check_input_file("--trusted-key", file));
    KHUB_TRY(std::string pem, read_file(file));
    if (!signing::public_key_hint(pem)) {
      return Error(ErrorCode::InvalidArgument, "--trusted-key " + file + " is not a PEM public key");
    }
    trust.public_keys_pem.push_back(std::move(pem));
  }
  if (!opts.trusted_workflows.empty()) trust.identities.clear();
  for (const auto& uri : opts.trusted_workflows) {
    KHUB_TRY(auto id, workflow_identity(uri));
    trust.identities.push_back(std::move(id));
  }
  if (!opts.sigstore_root.empty()) {
    KHUB_CHECK(check_input_file("--sigstore-root", opts.sigstore_root));
    KHUB_TRY(root, signing::SigstoreTrustRoot::load(opts.sigstore_root));
    trust.sigstore_root = &*root;
  }
  return trust;
}

int run_verify(const VerifyOptions& opts) {
  std::optional<signing::SigstoreTrustRoot> sigstore_root;
  auto trust = signature_trust(opts, sigstore_root);
  if (!trust) return report_error(trust.error());
  auto options = client_options(opts.hub);
  if (!options) return report_error(options.error());
  options->offline = true;  // verification reads the cache only
  hub::HubClient client(*options);
  auto repo = repo_for(opts.repo, opts.hub);
  if (!repo) return report_error(repo.error());
  std::optional<int> version;  // default: the newest cached version
  std::string revision;
  if (auto st = pick_default_revision(client, *repo, opts.hub, version, revision); !st) return report_error(st.error());
  auto commit = commit_with_fallback(client, *repo, opts.hub, version, revision);
  if (!commit && commit.error().code == ErrorCode::OfflineMiss) {
    // The library's text speaks of an offline Hub (kernels' words); verify is offline by design.
    const std::string what = version ? "version " + std::to_string(*version) : "revision '" + revision + "'";
    const std::string download =
        "khub download " + repo->id + (version ? " --version " + std::to_string(*version) : " --revision " + revision);
    return report_error(Error(ErrorCode::OfflineMiss,
                              what + " of '" + repo->id + "' is not in the cache; khub verify checks the cache only",
                              "run `" + download + "` first (`khub versions " + repo->id + "` lists the versions)"));
  }
  if (!commit) return report_error(commit.error());
  auto checks = hub::verify_cached(hub::cache_of(client), *repo, *commit, opts.variants);
  if (!checks) return report_error(checks.error());
  bool ok = true;
  bool damaged = false;
  nlohmann::ordered_json out = {{"repo_id", repo->id}, {"commit", *commit}, {"variants", nlohmann::json::array()}};
  for (auto c : *checks) {
    // A variant named with --variant must be whole; among every cached one a partial download is
    // reported, not failed (what is there still matches its hashes).
    const bool complete = c.missing.empty();
    std::string signature = c.has_signature ? "present (not verified)" : "absent";
    if (opts.signature) {
      const auto dir = hub::cache_of(client).snapshot_dir(*repo, *commit) / "build" / c.variant;
      const auto check = signing::verify_variant_signature(dir, *trust);
      signature = std::string(signing::to_string(check.outcome));
      if (check.outcome != signing::SignatureOutcome::Success) {
        c.ok = false;
        c.problems.push_back("build/" + c.variant + "/metadata.json.sigstore: " + signature +
                             (check.detail.empty() ? "" : ": " + check.detail));
      }
    }
    const bool passed = c.ok && (complete || opts.variants.empty());
    ok = ok && passed;
    damaged = damaged || !c.ok;
    out["variants"].push_back({{"variant", c.variant}, {"ok", passed}, {"complete", complete},
                               {"digest", c.has_digest},
                               {"signature", signature},
                               {"problems", c.problems}, {"missing", c.missing}});
    if (!opts.hub.json) {
      std::cout << (!passed ? "FAIL  " : complete ? "ok    " : "part  ") << c.variant
                << (c.has_digest ? "" : " (no digest: blobs only)")
                << (opts.signature && signature == signing::to_string(signing::SignatureOutcome::Success)
                        ? " (signature verified)"
                        : "");
      if (!complete)
        std::cout << " (" << c.expected_files - c.missing.size() << " of " << c.expected_files << " files cached)";
      std::cout << '\n';
      for (const auto& p : c.problems) std::cerr << "error: " << p << '\n';
      if (!passed && c.ok)
        for (const auto& m : c.missing) std::cerr << "error: " << m << ": not in the cache\n";
    }
  }
  out["ok"] = ok;
  if (opts.hub.json) std::cout << out.dump(2) << '\n';
  if (!ok && !opts.hub.json) {
    if (damaged) {  // blobs are shared by snapshots: only a fresh repo folder is sure
      std::cerr << "  hint: remove the bad files (`rm -r " << hub::cache_of(client).repo_dir(*repo).string()
                << "`) and download again\n";
    } else {
      std::cerr << "  hint: download the variant first (`khub download " << repo->id << "`)\n";
    }
  }
  return ok ? kOk : kFailure;
}

void setup_verify(CLI::App& root) {
  auto opts = std::make_shared<VerifyOptions>();
  auto* cmd = root.add_subcommand("verify", "Check cached kernel files against their hashes and digest (no network)");
  cmd->add_option("repo", opts->repo, "Repo id")->required();
  cmd->add_option("--variant", opts->variants, "Variant(s) to check (default: every cached one)");
  cmd->add_flag("--signature", opts->signature,
                 "Also verify each variant's metadata.json.sigstore (as `kernels verify-signature`)");
  cmd->add_option("--trusted-key", opts->trusted_keys, "PEM public key that may have signed (key-pair bundles)")
      ->check(kNotEmpty);
  cmd->add_option("--trusted-workflow", opts->trusted_workflows,
                  "GitHub workflow URI that may have signed keyless bundles, replacing kernels' default "
                  "(kernels-community's build workflows)")
      ->check(kNotEmpty);
  cmd->add_option("--sigstore-root", opts->sigstore_root,
                  "Sigstore trusted_root.json (default: the public-good root khub ships)")
      ->check(kNotEmpty);
  add_hub_flags(cmd, opts->hub);
  cmd->callback([opts] {
    if (!opts->signature && (!opts->trusted_keys.empty() || !opts->trusted_workflows.empty() ||
                             !opts->sigstore_root.empty())) {
      set_exit_code(report_error(Error(ErrorCode::InvalidArgument,
                                       "--trusted-key, --trusted-workflow and --sigstore-root need --signature")));
      return;
    }
    set_exit_code(run_verify(*opts));
  });
}

}  // namespace
KHUB_REGISTER_COMMAND("verify", setup_verify);
}  // namespace khub::cli
