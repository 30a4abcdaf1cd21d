// khub lock [PROJECT]: pins every [tool.kernels.dependencies] entry of PROJECT/pyproject.toml, and
// every kernel their variants depend on, to a commit in kernels.lock (the KernelLocks format that
// `kernels lock` writes and kernels 0.17 reads). Exit 0 ok, 1 failure, 2 usage.
#include <nlohmann/json.hpp>

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
  auto pin = [](const protocol::KernelLock& l) {
    return l.version ? "v" + std::to_string(*l.version) : *l.revision;
  };
  if (opts.hub.json) {
    nlohmann::ordered_json out = {{"lockfile", output.string()}, {"kernels", nlohmann::json::array()}};
    for (const auto& l : *locks) {
      nlohmann::ordered_json k = {{"repo_id", l.repo_id}};
      if (l.version) k["version"] = *l.version;
      else k["revision"] = *l.revision;
      k["commit"] = l.commit;
      out["kernels"].push_back(std::move(k));
    }
    std::cout << out.dump(2) << '\n';
  } else {
    for (const auto& l : *locks) std::cout << l.repo_id << " " << pin(l) << " " << l.commit << '\n';
    std::cout << output.string() << '\n';
  }
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
