// khub verify REPO: re-checks cached variants without any HTTP — every blob against its etag and the
// metadata.json digest. Exit 0 when all match, 1 naming each mismatching file, 2 on usage errors.
#include <nlohmann/json.hpp>

#include "hub_cli.h"
#include "khub/hub/download.h"
#include "khub/hub/kernel_fetch.h"
#include "khub/hub/project.h"

namespace khub::cli {
namespace {

struct VerifyOptions {
  std::string repo;
  std::vector<std::string> variants;
  HubFlags hub;
};

int run_verify(const VerifyOptions& opts) {
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
  for (const auto& c : *checks) {
    // A variant named with --variant must be whole; among every cached one a partial download is
    // reported, not failed (what is there still matches its hashes).
    const bool complete = c.missing.empty();
    const bool passed = c.ok && (complete || opts.variants.empty());
    ok = ok && passed;
    damaged = damaged || !c.ok;
    out["variants"].push_back({{"variant", c.variant}, {"ok", passed}, {"complete", complete},
                               {"digest", c.has_digest},
                               {"signature", c.has_signature ? "present (not verified)" : "absent"},
                               {"problems", c.problems}, {"missing", c.missing}});
    if (!opts.hub.json) {
      std::cout << (!passed ? "FAIL  " : complete ? "ok    " : "part  ") << c.variant
                << (c.has_digest ? "" : " (no digest: blobs only)");
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
  add_hub_flags(cmd, opts->hub);
  cmd->callback([opts] { set_exit_code(run_verify(*opts)); });
}

}  // namespace
KHUB_REGISTER_COMMAND("verify", setup_verify);
}  // namespace khub::cli
