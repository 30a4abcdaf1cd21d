// khub versions REPO: the kernel's versions (branches v<N>) with their commits, the variants of each
// and the one this host takes. Exit 0 ok, 1 failure, 2 usage.
#include <nlohmann/json.hpp>

#include "hub_cli.h"
#include "khub/hub/kernel_fetch.h"
#include "khub/variants/resolve.h"

namespace khub::cli {
namespace {

struct VersionsOptions {
  std::string repo;
  HubFlags hub;
};

int run_versions(const VersionsOptions& opts) {
  auto options = client_options(opts.hub);
  if (!options) return report_error(options.error());
  hub::HubClient client(*options);
  auto host = host_for(opts.hub);
  if (!host) return report_error(host.error());
  auto repo = repo_for(opts.repo, opts.hub);
  if (!repo) return report_error(repo.error());
  auto versions = versions_with_fallback(client, *repo, opts.hub);
  if (!versions) return report_error(versions.error());
  nlohmann::ordered_json out = {{"repo_id", repo->id}, {"repo_type", hub::to_string(repo->type)},
                                {"versions", nlohmann::json::array()}};
  for (const auto& v : *versions) {
    auto names = hub::list_variant_names(client, *repo, v.commit);
    if (!names) return report_error(names.error());
    auto r = variants::resolve_variants(*names, *host);
    const auto* pick = variants::first_loadable(r);
    out["versions"].push_back({{"version", v.version}, {"commit", v.commit}, {"variants", *names},
                               {"host_variant", pick ? nlohmann::json(pick->name) : nlohmann::json(nullptr)}});
    if (!opts.hub.json) {
      std::cout << "v" << v.version << "  " << v.commit << "  " << names->size() << " variant(s)";
      std::cout << "  this host: " << (pick ? pick->name : "none") << '\n';
    }
  }
  if (opts.hub.json) std::cout << out.dump(2) << '\n';
  else if (versions->empty()) std::cout << "no versions (no v<N> branches)\n";
  return kOk;
}

void setup_versions(CLI::App& root) {
  auto opts = std::make_shared<VersionsOptions>();
  auto* cmd = root.add_subcommand("versions", "List a kernel's versions, their variants and the one this host takes");
  cmd->add_option("repo", opts->repo, "Repo id")->required();
  add_hub_flags(cmd, opts->hub, false);
  cmd->callback([opts] { set_exit_code(run_versions(*opts)); });
}

}  // namespace
KHUB_REGISTER_COMMAND("versions", setup_versions);
}  // namespace khub::cli
