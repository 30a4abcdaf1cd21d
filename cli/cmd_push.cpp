// khub push <dir> --repo org/name: publish a build like `kernel-builder upload` (docs/publishing.md).
// Token from HF_TOKEN (then HUGGING_FACE_HUB_TOKEN, then the token file), endpoint from HF_ENDPOINT.
// All checks run before the first request. Exit 0 ok, 1 failure, 2 bad input, 4 auth.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "command.h"
#include "khub/base/environment.h"
#include "khub/base/url.h"
#include "khub/http/transport.h"
#include "khub/hub/options.h"
#include "khub/hub/repo.h"
#include "khub/publish/push.h"
#include "output.h"
#if KHUB_HAVE_ARCHIVE
#include "khub/publish/bundle.h"
#endif

namespace khub::cli {
namespace {

struct PushCmdOptions {
  std::vector<std::string> inputs;  // one build dir, or bundles made by `khub pack`
  std::optional<std::string> repo;  // nullopt: build.toml's general.hub.repo-id
  std::string branch;
  std::int64_t version = -1;
  std::string repo_type = "kernel";
  std::string output_json;
  std::string abi_check = "error";
  bool create_pr = false;
  bool dry_run = false;
  bool json = false;
  bool is_private = false;
  bool quiet = false;
};

Json pull_requests_json(const publish::PushResult& r) {
  Json prs = Json::array();
  for (const auto& pr : r.pull_requests) prs.push_back({{"branch", pr.branch}, {"url", pr.url}});
  return prs;
}

Json to_json(const publish::PushResult& r) {
  return {{"repo", r.repo},
          {"branch", r.branch},
          {"commit", r.commit},
          {"variants", r.variants},
          {"files_uploaded", r.files_uploaded},
          {"files_deleted", r.files_deleted},
          {"bytes_uploaded", r.bytes_uploaded},
          {"bytes_deduplicated", r.bytes_deduplicated},
          {"transfer", r.transfer.empty() ? Json(nullptr) : Json(r.transfer)},
          {"files_unchanged", r.files_unchanged},
          {"branch_created", r.branch_created},
          {"status", r.status},
          {"url", r.url},
          {"pull_requests", pull_requests_json(r)}};
}

std::string size_text(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  for (; value >= 1024 && unit < 3; ++unit) value /= 1024;
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

void print_text(std::ostream& out, const Json& r) {
  const auto status = r["status"].get<std::string>();
  const auto url = r["url"].get<std::string>();
  if (status == "pull_request_created") {
    for (const auto& pr : r["pull_requests"]) out << "Pull request created: " << pr["url"].get<std::string>() << '\n';
  } else if (status == "dry_run") {
    out << "Dry run: would upload " << r["files_uploaded"] << " file(s) (" << r["bytes_uploaded"]
        << " bytes) and delete " << r["files_deleted"] << " to " << url << '\n';
  } else if (status == "no_changes") {
    out << "Kernel unchanged: " << url << '\n';
  } else {
    out << "Kernel uploaded: " << url << '\n';
  }
  if (status == "uploaded" || status == "pull_request_created") {
    out << "Sent " << size_text(r["bytes_uploaded"].get<std::uint64_t>()) << " of file content ("
        << size_text(r["bytes_deduplicated"].get<std::uint64_t>()) << " deduplicated";
    if (r["transfer"].is_string()) out << ", " << (r["transfer"] == "xet" ? "Xet" : "LFS");
    out << ")\n";
  }
}

// kernel-builder's --output-json shape, for CI scripts written against it.
Status write_output_json(const std::string& path, const publish::PushResult& r) {
  const std::string status = r.status == "dry_run" ? "no_changes" : r.status;
  // kernel-builder's url is the uploaded tree, null when nothing was uploaded or a PR was opened.
  const Json url = status == "uploaded" ? Json(r.url) : nullptr;
  const Json j = {{"status", status}, {"repo_id", r.repo}, {"branch", r.branch}, {"url", url},
                  {"pull_requests", pull_requests_json(r)}};
  std::ofstream out(path, std::ios::trunc);
  out << j.dump(2) << '\n';
  if (!out) return Error(ErrorCode::Io, "cannot write " + path);
  return {};
}

// Removes the directory bundles were unpacked into, whatever happens.
struct ScratchDir {
  std::filesystem::path path;
  ~ScratchDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

Expected<publish::BuildTree> load_inputs(const PushCmdOptions& opts, ScratchDir& scratch) {
  std::error_code ec;
  if (opts.inputs.size() == 1 && std::filesystem::is_directory(opts.inputs[0], ec)) {
    return publish::discover_build(opts.inputs[0]);
  }
#if KHUB_HAVE_ARCHIVE
  std::vector<std::filesystem::path> bundles;
  for (const auto& in : opts.inputs) {
    if (!std::filesystem::exists(in, ec))
      return Error(ErrorCode::InvalidArgument, "input " + in + ": no such file or directory");
    if (!std::filesystem::is_regular_file(in, ec)) {
      return Error(ErrorCode::InvalidArgument, "`" + in + "` is not a bundle file",
                   "pass one build directory, or bundles made by `khub pack`");
    }
    bundles.emplace_back(in);
  }
  // The folder is named by this process: a push that Ctrl-C or a kill ended could not remove its
  // own, so the next push removes those whose process is gone.
  const auto tmp_root = std::filesystem::temp_directory_path();
  for (const auto& e : std::filesystem::directory_iterator(tmp_root, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("khub-push-") || !e.is_directory(ec)) continue;
    const auto dash = name.find('-', 10);
    const std::string pid = name.substr(10, dash == std::string::npos ? 0 : dash - 10);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) std::filesystem::remove_all(e.path(), ec);
  }
  std::string tmpl = (tmp_root / ("khub-push-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) return Error(ErrorCode::Io, "cannot create a temporary directory");
  scratch.path = tmpl;
  return publish::unpack_bundles(bundles, scratch.path / "kernel");
#else
  (void)scratch;
  return Error(ErrorCode::Unsupported, "this khub was built without libarchive: bundles cannot be pushed",
               "push the build directory instead");
#endif
}

// A bundle push checks a temporary folder that is removed before the user reads the error: the error
// names the bundles, never that folder.
Error naming_bundles(Error e, const std::filesystem::path& scratch, const std::vector<std::string>& bundles) {
  std::string names;
  for (const auto& b : bundles) names += (names.empty() ? "" : ", ") + b;
  const std::string gone = scratch.string();
  const auto scrub = [&](std::string& text) {
    for (auto at = text.find(gone); at != std::string::npos; at = text.find(gone, at + names.size()))
      text.replace(at, gone.size(), names);
  };
  scrub(e.message);
  for (auto& n : e.notes) scrub(n);
  if (e.hint.find(gone) != std::string::npos || e.hint.find("khub check") != std::string::npos)
    e.hint = "the bundles were unpacked into a temporary folder, removed again; run `khub check` (and `khub hash`) "
             "on the build folder they were packed from";
  return e;
}

// What can be checked before anything is created on the Hub.
Status check_push_arguments(const PushCmdOptions& opts) {
  if (opts.repo && opts.repo->find('/') == std::string::npos) {  // a bare name: the token's user's repo
    if (!is_valid_repo_name(*opts.repo))
      return Error(ErrorCode::InvalidArgument, "invalid repo name '" + *opts.repo + "'",
                   "use 1-96 letters, digits, '-', '_' or '.', not starting or ending with '-' or '.', or namespace/name");
  } else if (opts.repo) {
    if (auto repo = hub::make_repo(*opts.repo); !repo) return repo.error();
  }
  if (!opts.branch.empty() && !is_valid_ref_name(opts.branch))
    return Error(ErrorCode::InvalidArgument, "--branch '" + opts.branch + "' is not a valid branch name",
                 "use letters, digits, '-', '_', '.' and '/', e.g. v1 or release/2026-12");
  if (!opts.output_json.empty()) KHUB_CHECK(check_output_path("--output-json", opts.output_json));
  if (hub::offline_from_environment())  // even --dry-run asks the Hub
    return Error(ErrorCode::InvalidArgument, "cannot push while HF_HUB_OFFLINE is set", "unset HF_HUB_OFFLINE");
  return {};
}

int run_push(const PushCmdOptions& opts) {
  if (auto st = check_push_arguments(opts); !st) return report_error(st.error());
  ScratchDir scratch;
  auto tree = load_inputs(opts, scratch);
  if (!tree) return report_error(tree.error());
  publish::PushOptions o;
  if (auto e = env_value("HF_ENDPOINT"); !e.empty()) o.endpoint = e;
  o.token = hf_token_from_environment();
  o.repo_id = opts.repo.value_or("");
  if (!opts.branch.empty()) o.branch = opts.branch;
  if (opts.version >= 0) o.version = static_cast<std::uint64_t>(opts.version);
  o.repo_type = repo_type_from_name(opts.repo_type).value_or(RepoType::Kernel);  // CLI11 allowed kernel|model only
  o.is_private = opts.is_private;
  o.create_pr = opts.create_pr;
  o.dry_run = opts.dry_run;
  o.abi_policy = opts.abi_check == "warn" ? publish::PushOptions::AbiPolicy::Warn
                 : opts.abi_check == "off" ? publish::PushOptions::AbiPolicy::Off
                                           : publish::PushOptions::AbiPolicy::Error;
  if (!opts.quiet) o.status = [](std::string_view line) { std::cerr << line << '\n'; };
  const TrustedCas cas = trusted_cas_from_environment();
  auto transport = http::make_curl_transport(
      {.user_agent = std::string("khub/") + KHUB_VERSION, .ca_file = cas.file, .ca_dir = cas.dir});
  auto result = publish::push_build(*tree, o, *transport);
  if (!result)
    return report_error(scratch.path.empty() ? result.error() : naming_bundles(result.error(), scratch.path, opts.inputs));
  if (!opts.output_json.empty()) {
    if (auto st = write_output_json(opts.output_json, *result); !st) return report_error(st.error());
  }
  print_result(opts.json, to_json(*result), print_text);
  return kOk;
}

void setup_push(CLI::App& root) {
  auto opts = std::make_shared<PushCmdOptions>();
  auto* cmd = root.add_subcommand("push", "Publish a multi-variant kernel build to the Hub");
  cmd->add_option("inputs", opts->inputs, "kernel dir or its build/, or bundles from `khub pack`")->required();
  cmd->add_option("--repo,--repo-id", opts->repo, "org/name, or a bare name for the token's user (default: general.hub.repo-id of build.toml)");
  cmd->add_option("--branch", opts->branch, "target branch (default: general.hub.branch, else v<version>)")
      ->check(kNotEmpty);
  cmd->add_option("--version", opts->version, "expected kernel version; must match metadata.json")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--repo-type", opts->repo_type, "kernel (default) or model (legacy repos)")
      ->check(CLI::IsMember({"kernel", "model"}));
  cmd->add_option("--output-json", opts->output_json, "also write kernel-builder's result JSON to this file");
  cmd->add_option("--abi-check", opts->abi_check,
                  "manylinux_2_28/abi3 findings: error (default), warn (report and go on) or off")
      ->check(CLI::IsMember({"error", "warn", "off"}));
  cmd->add_flag("--create-pr", opts->create_pr, "open a pull request instead of committing to the branch");
  cmd->add_flag("--dry-run", opts->dry_run, "run the checks and show the plan; no writes");
  cmd->add_flag("--private", opts->is_private, "create the repo as private");
  cmd->add_flag("--json", opts->json, "print the result as JSON");
  cmd->add_flag("-q,--quiet", opts->quiet, "no progress lines on stderr");
  cmd->callback([opts] { set_exit_code(run_push(*opts)); });
}

}  // namespace
KHUB_REGISTER_COMMAND("push", setup_push);
}  // namespace khub::cli
