// khub check <build/>: the pre-flight of `khub push` on its own — variant names, metadata.json, one
// version, id == module stem == op namespace, digest, manylinux_2_28 / abi3 / library rules.
// Prints a per-file report (or --json); exit 0 clean (warnings allowed), 1 on any violation, 2 bad input.
#include <map>
#include <ostream>

#include "command.h"
#include "khub/publish/check.h"
#include "output.h"

namespace khub::cli {
namespace {

struct CheckCmdOptions {
  std::string dir;
  bool json = false;
  bool no_abi = false;
};

Json to_json(const publish::CheckReport& report) {
  Json j;
  j["ok"] = report.ok();
  j["variants"] = report.variants;
  j["files_checked"] = report.files_checked;
  auto findings = Json::array();
  for (const auto& f : report.findings) {
    findings.push_back({{"file", f.file},
                        {"check", f.check},
                        {"severity", f.severity == publish::Severity::Error ? "error" : "warning"},
                        {"message", f.message}});
  }
  j["findings"] = std::move(findings);
  return j;
}

void print_text(std::ostream& out, const publish::CheckReport& report) {
  std::map<std::string, std::vector<const publish::Finding*>> by_file;
  for (const auto& f : report.findings) by_file[f.file].push_back(&f);
  for (const auto& [file, findings] : by_file) {
    out << (file.empty() ? "(build)" : file) << '\n';
    for (const auto* f : findings) {
      out << "  " << (f->severity == publish::Severity::Error ? "error" : "warning") << " [" << f->check
                << "] " << f->message << '\n';
    }
  }
  out << (report.ok() ? "ok: " : "issues found: ") << report.variants.size()
            << " variant(s), " << report.files_checked.size() << " native module(s), " << report.error_count()
            << " error(s)\n";
}

int run_check(const CheckCmdOptions& opts) {
  auto tree = publish::discover_build(opts.dir);
  if (!tree) return report_error(tree.error());
  publish::CheckOptions options;
  options.abi = !opts.no_abi;
  auto report = publish::check_build(*tree, options);
  if (!report) return report_error(report.error());
  print_result(opts.json, to_json(*report), [&](std::ostream& out, const Json&) { print_text(out, *report); });
  return report->ok() ? kOk : kFailure;
}

void setup_check(CLI::App& root) {
  auto opts = std::make_shared<CheckCmdOptions>();
  auto* cmd = root.add_subcommand("check", "Check a build tree before publishing (metadata, digest, ABI)");
  cmd->add_option("dir", opts->dir, "kernel dir, build/ or build/<variant>")->required();
  cmd->add_flag("--json", opts->json, "Print the report as JSON");
  cmd->add_flag("--no-abi", opts->no_abi, "Skip the ELF (manylinux/abi3/library) checks");
  cmd->callback([opts] { set_exit_code(run_check(*opts)); });
}

}  // namespace
KHUB_REGISTER_COMMAND("check", setup_check);
}  // namespace khub::cli
