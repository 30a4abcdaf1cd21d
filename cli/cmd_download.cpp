// khub download REPO [PATH…]: files, the whole repo (--all) or, by default, the build variant this
// host takes, into the shared cache; prints the snapshot folder. Exit 0 ok, 1 failure, 2 usage.
#include <nlohmann/json.hpp>

#include "hub_cli.h"
#include "khub/hub/download.h"
#include "khub/hub/kernel_fetch.h"

namespace khub::cli {
namespace {

struct DownloadOptions {
  std::string repo;
  std::vector<std::string> paths;
  bool all = false;
  HubFlags hub;
};

int run_download(const DownloadOptions& opts) {
  auto options = client_options(opts.hub);
  if (!options) return report_error(options.error());
  hub::HubClient client(*options);
  nlohmann::ordered_json out;
  std::filesystem::path snapshot;
  if (opts.paths.empty() && !opts.all) {
    auto host = host_for(opts.hub);
    if (!host) return report_error(host.error());
    auto repo = repo_for(opts.repo, opts.hub);
    if (!repo) return report_error(repo.error());
    hub::KernelRequest request;
    request.repo_id = opts.repo;
    if (auto st = pick_default_revision(client, *repo, opts.hub, request.version, request.revision); !st)
      return report_error(st.error());
    request.trust_remote_code = true;  // downloading runs nothing; trust is checked when loading
    if (!opts.hub.repo_type.empty() || repo->type == hub::RepoType::Model) request.repo_type = repo->type;
    auto k = hub::fetch_kernel(client, *host, request);
    if (!k) return report_error(k.error());
    for (const auto& w : k->warnings) std::cerr << "warning: " << w << '\n';
    snapshot = hub::cache_of(client).snapshot_dir(k->repo, k->commit);
    out = {{"repo_id", k->repo.id}, {"repo_type", hub::to_string(k->repo.type)}, {"revision", k->revision},
           {"commit", k->commit}, {"snapshot", snapshot.string()}, {"variant", k->variant},
           {"variant_dir", k->variant_dir.string()}, {"verified", k->verified},
           {"signature", k->signature == hub::SignatureStatus::Absent ? "absent" : "present (not verified)"}};
  } else {
    auto repo = repo_for(opts.repo, opts.hub);
    if (!repo) return report_error(repo.error());
    std::string revision = opts.hub.version ? "v" + std::to_string(*opts.hub.version)
                                            : (opts.hub.revision.empty() ? "main" : opts.hub.revision);
    auto commit = commit_with_fallback(client, *repo, opts.hub, opts.hub.version, opts.hub.revision);
    if (!commit) return report_error(commit.error());
    std::vector<std::string> files = opts.paths;
    if (opts.all && options->offline) {
      // Offline, the whole revision is what its snapshot holds (huggingface_hub's snapshot_download).
      auto cached = hub::cached_snapshot_files(hub::cache_of(client), *repo, *commit);
      if (!cached) return report_error(cached.error());
      files = std::move(cached).value();
    } else if (opts.all) {
      auto tree = client.list_tree(*repo, *commit, "", true);
      if (!tree) return report_error(tree.error());
      if (auto s = hub::fetch_files(client, *repo, *commit, *tree); !s) return report_error(s.error());
      for (const auto& e : *tree)
        if (!e.directory) files.push_back(e.path);
    } else {
      for (const auto& p : opts.paths)
        if (auto f = hub::fetch_file(client, *repo, *commit, p); !f) return report_error(f.error());
    }
    snapshot = hub::cache_of(client).snapshot_dir(*repo, *commit);
    out = {{"repo_id", repo->id}, {"repo_type", hub::to_string(repo->type)}, {"revision", revision},
           {"commit", *commit}, {"snapshot", snapshot.string()}, {"files", files}};
  }
  if (opts.hub.json) std::cout << out.dump(2) << '\n';
  else std::cout << snapshot.string() << '\n';
  return kOk;
}

void setup_download(CLI::App& root) {
  auto opts = std::make_shared<DownloadOptions>();
  auto* cmd = root.add_subcommand("download", "Download a kernel (the variant this host takes), files or a whole repo "
                                              "into the shared cache and print the snapshot folder");
  cmd->add_option("repo", opts->repo, "Repo id, e.g. kernels-community/relu")->required();
  cmd->add_option("paths", opts->paths, "Files to download instead of the host's variant");
  cmd->add_flag("--all", opts->all, "Download every file of the revision");
  add_hub_flags(cmd, opts->hub);
  cmd->callback([opts] { set_exit_code(run_download(*opts)); });
}

}  // namespace
KHUB_REGISTER_COMMAND("download", setup_download);
}  // namespace khub::cli
