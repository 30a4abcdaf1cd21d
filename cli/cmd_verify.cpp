// khub verify REPO: re-checks cached variants without any HTTP — every blob against its etag and the
// metadata.json digest, and with --signature each variant's metadata.json.sigstore (as
// `kernels verify-signature`); with --all every file of the revision, against the cached tree listing
// where there is one. Exit 0 when all match, 1 naming each mismatching file, 2 on usage errors.
#include <algorithm>

#include "hub_cli.h"
#include "khub/base/fs.h"
#include "khub/hub/download.h"
#include "khub/hub/project.h"
#include "khub/signing/signature.h"

namespace khub::cli {
namespace {

struct VerifyOptions {
  std::string repo;
  std::vector<std::string> variants;
  HubFlags hub;
  bool all = false;  // every file of the revision instead of the variants
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

Json to_json(const hub::RepoRevision& at, const std::vector<hub::VariantCheck>& checks, bool ok) {
  Json variants = Json::array();
  for (const auto& c : checks) {
    variants.push_back({{"variant", c.variant}, {"ok", c.passed}, {"complete", c.complete}, {"digest", c.has_digest},
                        {"signature", c.signature}, {"problems", c.problems}, {"missing", c.missing}});
  }
  return {{"repo_id", at.repo.id}, {"commit", at.commit}, {"variants", std::move(variants)}, {"ok", ok}};
}

// The revision the flags name and its commit, from the cache alone (the client is offline).
Expected<hub::RepoRevision> cached_revision(hub::HubClient& client, const VerifyOptions& opts) {
  // --all names a whole revision, main unless one is named, as `khub download --all` does.
  const auto lookup = lookup_for(opts.repo, opts.hub,
                                 opts.all ? hub::RepoLookup::Default::Main : hub::RepoLookup::Default::NewestVersion);
  KHUB_TRY(auto at, hub::choose_revision(client, lookup));
  auto found = hub::find_commit(client, at, !lookup.type);
  if (found) return at;
  if (found.error().code != ErrorCode::OfflineMiss) return std::move(found).error();
  // The library's text speaks of an offline Hub (kernels' words); verify is offline by design.
  const auto& id = at.repo.id;
  const std::string v = at.version ? std::to_string(*at.version) : "";
  const std::string what = at.version ? "version " + v : "revision '" + at.revision + "'";
  const std::string download = "khub download " + id + (opts.all ? " --all" : "") +
                               (at.version ? " --version " + v : " --revision " + at.revision);
  return Error(ErrorCode::OfflineMiss, what + " of '" + id + "' is not in the cache; khub verify checks the cache only",
               "run `" + download + "` first (`khub versions " + id + "` lists the versions)");
}

Json to_json(const hub::RepoRevision& at, const hub::SnapshotCheck& c) {
  return {{"repo_id", at.repo.id}, {"commit", at.commit}, {"files", c.cached_files},
          {"tree_listing", c.has_listing}, {"expected_files", c.expected_files}, {"complete", c.complete},
          {"problems", c.problems}, {"missing", c.missing}, {"ok", c.passed}};
}

// --all: every cached file of the revision.
int verify_snapshot(hub::HubClient& client, const hub::RepoRevision& at, const VerifyOptions& opts) {
  const hub::CacheLayout cache = hub::cache_of(client);
  auto check = hub::verify_cached_snapshot(cache, at.repo, at.commit);
  if (!check) return report_error(check.error());
  const auto& c = *check;
  print_result(opts.hub.json, to_json(at, c), [&](std::ostream& out, const Json&) {
    out << (c.passed ? "ok    " : "FAIL  ") << at.repo.id << " " << at.commit << ": ";
    if (!c.has_listing) out << c.cached_files << " files (no cached tree listing: completeness unknown)\n";
    else out << c.cached_files << " of " << c.expected_files << " files cached\n";
    for (const auto& p : c.problems) std::cerr << "error: " << p << '\n';
    for (const auto& m : c.missing) std::cerr << "error: " << m << ": not in the cache\n";
    if (!c.ok)
      std::cerr << "  hint: remove the bad files (`rm -r " << cache.repo_dir(at.repo).string()
                << "`) and download again\n";
    else if (!c.complete)
      std::cerr << "  hint: download the missing files (`khub download " << at.repo.id << " --all --revision "
                << at.commit << "`)\n";
  });
  return c.passed ? kOk : kFailure;
}

int run_verify(const VerifyOptions& opts) {
  std::optional<signing::SigstoreTrustRoot> sigstore_root;
  auto trust = signature_trust(opts, sigstore_root);
  if (!trust) return report_error(trust.error());
  auto options = client_options(opts.hub);
  if (!options) return report_error(options.error());
  options->offline = true;  // verification reads the cache only
  hub::HubClient client(*options);
  auto at = cached_revision(client, opts);
  if (!at) return report_error(at.error());
  if (opts.all) return verify_snapshot(client, *at, opts);
  const hub::CacheLayout cache = hub::cache_of(client);
  auto checks = hub::verify_cached(cache, at->repo, at->commit, opts.variants, opts.signature ? &*trust : nullptr);
  if (!checks) return report_error(checks.error());
  const bool ok = std::all_of(checks->begin(), checks->end(), [](const auto& c) { return c.passed; });
  const bool damaged = std::any_of(checks->begin(), checks->end(), [](const auto& c) { return !c.ok; });
  print_result(opts.hub.json, to_json(*at, *checks, ok), [&](std::ostream& out, const Json&) {
    for (const auto& c : *checks) {
      out << (!c.passed ? "FAIL  " : c.complete ? "ok    " : "part  ") << c.variant
          << (c.has_digest ? "" : " (no digest: blobs only)")
          << (opts.signature && c.signature == signing::to_string(signing::SignatureOutcome::Success)
                  ? " (signature verified)"
                  : "");
      if (!c.complete)
        out << " (" << c.expected_files - c.missing.size() << " of " << c.expected_files << " files cached)";
      out << '\n';
      for (const auto& p : c.problems) std::cerr << "error: " << p << '\n';
      if (!c.passed && c.ok)
        for (const auto& m : c.missing) std::cerr << "error: " << m << ": not in the cache\n";
    }
    if (ok) return;
    if (damaged) {  // blobs are shared by snapshots: only a fresh repo folder is sure
      std::cerr << "  hint: remove the bad files (`rm -r " << cache.repo_dir(at->repo).string()
                << "`) and download again\n";
    } else {
      std::cerr << "  hint: download the variant first (`khub download " << at->repo.id << "`)\n";
    }
  });
  return ok ? kOk : kFailure;
}

void setup_verify(CLI::App& root) {
  auto opts = std::make_shared<VerifyOptions>();
  auto* cmd = root.add_subcommand("verify", "Check cached kernel files against their hashes and digest (no network)");
  cmd->add_option("repo", opts->repo, "Repo id")->required();
  auto* variant = cmd->add_option("--variant", opts->variants, "Variant(s) to check (default: every cached one)");
  auto* signature = cmd->add_flag("--signature", opts->signature,
                                  "Also verify each variant's metadata.json.sigstore (as `kernels verify-signature`)");
  cmd->add_flag("--all", opts->all,
                "Check every cached file of the revision (default main), and that none its cached tree listing "
                "names is missing")
      ->excludes(variant)
      ->excludes(signature);
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
