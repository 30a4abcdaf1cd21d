// khub info REPO: what the Hub says about a kernel at a version or revision — commit, publisher
// trust, variants, the one this host takes and its metadata. Exit 0 ok, 1 failure, 2 usage.
#include <nlohmann/json.hpp>

#include "hub_cli.h"
#include "khub/hub/download.h"
#include "khub/hub/kernel_fetch.h"
#include "khub/protocol/metadata.h"

namespace khub::cli {
namespace {

int run_info(const RepoQueryOptions& opts) {
  auto options = client_options(opts.hub);
  if (!options) return report_error(options.error());
  hub::HubClient client(*options);
  auto query = repo_query(opts);
  if (!query) return report_error(query.error());
  auto& repo = query->repo;  // versions_with_fallback may switch its type
  std::optional<int> version;
  std::string revision;
  if (auto st = pick_default_revision(client, repo, opts.hub, version, revision); !st) return report_error(st.error());
  auto commit = commit_with_fallback(client, repo, opts.hub, version, revision);
  if (!commit) return report_error(commit.error());
  auto names = hub::list_variant_names(client, repo, *commit);
  if (!names) return report_error(names.error());
  auto pick = host_variant(*names, query->host);
  nlohmann::ordered_json out = {
      {"repo_id", repo.id}, {"repo_type", hub::to_string(repo.type)},
      {"revision", version ? "v" + std::to_string(*version) : revision}, {"commit", *commit}};
  if (!client.options().offline) {
    auto trusted = client.is_trusted_publisher(repo.id.substr(0, repo.id.find('/')));
    out["trusted_publisher"] = trusted ? nlohmann::json(*trusted) : nlohmann::json(nullptr);
  }
  out["variants"] = *names;
  out["host_variant"] = pick;
  if (!pick.is_null()) {
    auto meta_file = hub::fetch_file(client, repo, *commit, "build/" + pick.get<std::string>() + "/metadata.json");
    if (!meta_file) return report_error(meta_file.error());
    auto meta = protocol::read_metadata(*meta_file);
    if (!meta) return report_error(meta.error());
    out["metadata"] = {{"name", meta->name}, {"id", meta->id}, {"version", meta->version},
                       {"license", meta->license}, {"backend", protocol::to_string(meta->backend.type)},
                       {"archs", meta->backend.archs.value_or(std::vector<std::string>{})},
                       {"digest", meta->digest.has_value()}};
  }
  if (opts.hub.json) {
    std::cout << out.dump(2) << '\n';
    return kOk;
  }
  std::cout << repo.id << " (" << hub::to_string(repo.type) << ")  " << out["revision"].get<std::string>() << " = "
            << *commit << '\n';
  if (out.contains("trusted_publisher"))
    std::cout << "trusted publisher: " << (out["trusted_publisher"].is_null() ? "unknown"
                                           : out["trusted_publisher"].get<bool>() ? "yes" : "no") << '\n';
  std::cout << "variants: " << names->size() << "\nthis host: " << (pick.is_null() ? "none" : pick.get<std::string>())
            << '\n';
  if (out.contains("metadata"))
    std::cout << "metadata: " << out["metadata"].dump() << '\n';
  return kOk;
}

void setup_info(CLI::App& root) {
  auto opts = std::make_shared<RepoQueryOptions>();
  auto* cmd = root.add_subcommand("info", "Show a kernel's commit, trust, variants and the one this host takes");
  cmd->add_option("repo", opts->repo, "Repo id")->required();
  add_hub_flags(cmd, opts->hub);
  cmd->callback([opts] { set_exit_code(run_info(*opts)); });
}

}  // namespace
KHUB_REGISTER_COMMAND("info", setup_info);
}  // namespace khub::cli
