// khub lock [PROJECT]: pins every [tool.kernels.dependencies] entry of PROJECT/pyproject.toml, and
// every kernel their variants depend on, to a commit in kernels.lock (the KernelLocks format that
// `kernels lock` writes and kernels 0.17 reads). Exit 0 ok, 1 failure, 2 usage.
#include "hub_cli.h"
#include "khub/hub/project.h"
#include "khub/protocol/lock.h"

namespace khub::cli {
namespace {

struct LockOptions {
  std::string project = ".";
  std::string output;  // default PROJECT/kernels.lock
  bool trust_remote_code = false;
  HubFlags hub;
};

Json to_json(const std::vector<protocol::KernelLock>& locks, const std::filesystem::path& lockfile) {
  Json kernels = Json::array();
  for (const auto& l : locks) {
    Json k = {{"repo_id", l.repo_id}};
    if (l.version) k["version"] = *l.version;
    else k["revision"] = *l.revision;
    k["commit"] = l.commit;
    kernels.push_back(std::move(k));
  }
  return {{"lockfile", lockfile.string()}, {"kernels", std::move(kernels)}};
}

int run_lock(const LockOptions& opts) {
  auto options = client_options(opts.hub);
  if (!options) return report_error(options.error());
  hub::HubClient client(*options);
  std::filesystem::path project = opts.project;
  std::filesystem::path pyproject = std::filesystem::is_directory(project) ? project / "pyproject.toml" : project;
  std::filesystem::path output = opts.output.empty() ? pyproject.parent_path() / "kernels.lock" : std::filesystem::path(opts.output);
  for (const Status& st : {check_input_file("project", pyproject), check_output_path("--output", output)})
    if (!st) return report_error(st.error());
  auto locks = hub::lock_project(client, pyproject, opts.trust_remote_code);
  if (!locks) return report_error(locks.error());
  auto text = protocol::serialize_kernel_locks(*locks);
  if (!text) return report_error(text.error());
  if (auto s = write_file_atomic(output, *text); !s) return report_error(s.error());
  print_result(opts.hub.json, to_json(*locks, output), [](std::ostream& out, const Json& j) {
    for (const auto& k : j["kernels"]) {
      const std::string pin = k.contains("version") ? "v" + std::to_string(k["version"].get<std::uint64_t>())
                                                    : k["revision"].get<std::string>();
      out << k["repo_id"].get<std::string>() << " " << pin << " " << k["commit"].get<std::string>() << '\n';
    }
    out << j["lockfile"].get<std::string>() << '\n';
  });
  return kOk;
}

void setup_lock(CLI::App& root) {
  auto opts = std::make_shared<LockOptions>();
  auto* cmd = root.add_subcommand("lock", "Write kernels.lock for the kernels a pyproject.toml depends on");
  cmd->add_option("project", opts->project, "Project folder or pyproject.toml (default: .)");
  cmd->add_option("-o,--output", opts->output, "Lock file to write (default: next to pyproject.toml)");
  cmd->add_flag("--trust-remote-code", opts->trust_remote_code,
                "Lock kernels whose publisher is not a trusted kernel publisher too");
  add_hub_flags(cmd, opts->hub, false);
  cmd->callback([opts] { set_exit_code(run_lock(*opts)); });
}

}  // namespace
KHUB_REGISTER_COMMAND("lock", setup_lock);
}  // namespace khub::cli
