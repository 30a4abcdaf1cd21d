// khub download REPO [PATH…]: files, the whole repo (--all) or, by default, the build variant this
// host takes, into the shared cache; prints the snapshot folder. Exit 0 ok, 1 failure, 2 usage.
#include "hub_cli.h"
#include "khub/hub/download.h"
#include "khub/hub/kernel_tree.h"

namespace khub::cli {
namespace {

struct DownloadOptions {
  std::string repo;
  std::vector<std::string> paths;
  bool all = false;
  HubFlags hub;
};

Json to_json(const hub::FetchedKernel& k, const std::filesystem::path& snapshot) {
  return {{"repo_id", k.repo.id}, {"repo_type", khub::to_string(k.repo.type)}, {"revision", k.revision},
          {"commit", k.commit}, {"snapshot", snapshot.string()}, {"variant", k.variant},
          {"variant_dir", k.variant_dir.string()}, {"verified", k.verified},
          {"signature", k.signature == hub::SignatureStatus::Absent ? "absent" : "present (not verified)"}};
}

Json to_json(const hub::RepoRevision& at, const std::filesystem::path& snapshot,
             const std::vector<std::string>& files) {
  return {{"repo_id", at.repo.id}, {"repo_type", khub::to_string(at.repo.type)}, {"revision", at.name()},
          {"commit", at.commit}, {"snapshot", snapshot.string()}, {"files", files}};
}

void print_text(std::ostream& out, const Json& j) { out << j["snapshot"].get<std::string>() << '\n'; }

// The variant this host takes, at the newest version unless one is named, and the variant of each
// kernel of its kernel-depends tree (a Python-only one as the Python client would load it).
Expected<Json> download_variant(hub::HubClient& client, const DownloadOptions& opts) {
  KHUB_TRY(auto host, host_for(opts.hub));
  KHUB_TRY(auto request, hub::kernel_request(client, lookup_for(opts.repo, opts.hub)));
  request.options.trust_remote_code = true;  // downloading runs nothing; trust is checked when loading
  KHUB_TRY(auto tree, hub::fetch_kernel_tree(client, host, request));
  const auto& k = tree.kernel;
  for (const auto& w : k.warnings) std::cerr << "warning: " << w << '\n';
  Json out = to_json(k, hub::cache_of(client).snapshot_dir(k.repo, k.commit));
  out["dependencies"] = Json::array();
  for (const auto& d : tree.dependencies) {
    Json dep = to_json(d.kernel, d.local ? d.kernel.variant_dir : hub::cache_of(client).snapshot_dir(d.kernel.repo, d.kernel.commit));
    dep["dependency"] = hub::describe(d.dependency);
    dep["dependent"] = d.dependent;
    dep["loadable"] = d.kernel.loadable;
    if (!opts.hub.json)
      std::cerr << "dependency " << hub::describe(d.dependency) << ": " << d.kernel.variant
                << (d.kernel.loadable ? "" : " (Python-only build: only the Python `kernels` package loads it)") << '\n';
    out["dependencies"].push_back(std::move(dep));
  }
  return out;
}

// Files, or with --all every file, at the named revision (default main).
Expected<Json> download_files(hub::HubClient& client, const DownloadOptions& opts) {
  KHUB_TRY(auto at, hub::find_revision(client, lookup_for(opts.repo, opts.hub, hub::RepoLookup::Default::Main)));
  KHUB_TRY(auto files, hub::download_files(client, at.repo, at.commit, opts.paths, opts.all));
  return to_json(at, hub::cache_of(client).snapshot_dir(at.repo, at.commit), files);
}

int run_download(const DownloadOptions& opts) {
  auto options = client_options(opts.hub);
  if (!options) return report_error(options.error());
  hub::HubClient client(*options);
  auto out = opts.paths.empty() && !opts.all ? download_variant(client, opts) : download_files(client, opts);
  if (!out) return report_error(out.error());
  print_result(opts.hub.json, *out, print_text);
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
