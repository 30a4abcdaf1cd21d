// khub versions REPO: the kernel's versions (branches v<N>) with their commits, the variants of each
// and the one this host takes. Exit 0 ok, 1 failure, 2 usage.
#include <nlohmann/json.hpp>

#include "hub_cli.h"
#include "khub/hub/kernel_fetch.h"

namespace khub::cli {
namespace {

int run_versions(const RepoQueryOptions& opts) {
  auto options = client_options(opts.hub);
  if (!options) return report_error(options.error());
  hub::HubClient client(*options);
  auto query = repo_query(opts);
  if (!query) return report_error(query.error());
  auto& repo = query->repo;  // versions_with_fallback may switch its type
  auto versions = versions_with_fallback(client, repo, opts.hub);
  if (!versions) return report_error(versions.error());
  nlohmann::ordered_json out = {{"repo_id", repo.id}, {"repo_type", hub::to_string(repo.type)},
                                {"versions", nlohmann::json::array()}};
  for (const auto& v : *versions) {
    auto names = hub::list_variant_names(client, repo, v.commit);
    if (!names) return report_error(names.error());
    // Folders whose names are no variant are left out, as `kernels versions` leaves them out.
    std::erase_if(*names, [](const std::string& n) { return !variants::parse_variant(n); });
    auto pick = host_variant(*names, query->host);
    out["versions"].push_back(
        {{"version", v.version}, {"commit", v.commit}, {"variants", *names}, {"host_variant", pick}});
    if (!opts.hub.json) {
      std::cout << "v" << v.version << "  " << v.commit << "  " << names->size() << " variant(s)";
      std::cout << "  this host: " << (pick.is_null() ? "none" : pick.get<std::string>()) << '\n';
    }
  }
  if (opts.hub.json) std::cout << out.dump(2) << '\n';
  else if (versions->empty()) std::cout << "no versions (no v<N> branches)\n";
  return kOk;
}

void setup_versions(CLI::App& root) {
  auto opts = std::make_shared<RepoQueryOptions>();
  auto* cmd = root.add_subcommand("versions", "List a kernel's versions, their variants and the one this host takes");
  cmd->add_option("repo", opts->repo, "Repo id")->required();
  add_hub_flags(cmd, opts->hub, false);
  cmd->callback([opts] { set_exit_code(run_versions(*opts)); });
}

}  // namespace
KHUB_REGISTER_COMMAND("versions", setup_versions);
}  // namespace khub::cli
