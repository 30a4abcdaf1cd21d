// khub versions REPO: the kernel's versions (branches v<N>) with their commits, the variants of each
// and the one this host takes. Exit 0 ok, 1 failure, 2 usage.
#include "hub_cli.h"

namespace khub::cli {
namespace {

Json to_json(const hub::KernelVersions& k) {
  Json versions = Json::array();
  for (const auto& v : k.versions) {
    versions.push_back({{"version", v.version}, {"commit", v.commit}, {"variants", v.variants},
                        {"host_variant", or_null(v.host_variant)}});
  }
  return {{"repo_id", k.repo.id}, {"repo_type", khub::to_string(k.repo.type)}, {"versions", std::move(versions)}};
}

void print_text(std::ostream& out, const Json& j) {
  for (const auto& v : j["versions"]) {
    out << "v" << v["version"].get<int>() << "  " << v["commit"].get<std::string>() << "  " << v["variants"].size()
        << " variant(s)  this host: " << (v["host_variant"].is_null() ? "none" : v["host_variant"].get<std::string>())
        << '\n';
  }
  if (j["versions"].empty()) out << "no versions (no v<N> branches)\n";
}

int run_versions(const RepoQueryOptions& opts) {
  auto options = client_options(opts.hub);
  if (!options) return report_error(options.error());
  hub::HubClient client(*options);
  auto host = host_for(opts.hub);
  if (!host) return report_error(host.error());
  auto versions = hub::summarize_versions(client, lookup_for(opts.repo, opts.hub), *host);
  if (!versions) return report_error(versions.error());
  print_result(opts.hub.json, to_json(*versions), print_text);
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
