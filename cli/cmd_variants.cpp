// khub variants: which build variants this host (or a described one) accepts, best first, and why
// the others are rejected — the decision the Python `kernels` client makes (docs/variants.md).
// Exit 0 when a variant is chosen, 1 when none fits, 2 on bad input.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli_host.h"
#include "command.h"
#include "khub/variants/candidates.h"
#include "khub/variants/host.h"
#include "khub/variants/resolve.h"
#include "output.h"

namespace khub::cli {
namespace {

using namespace khub::variants;

struct VariantsOptions {
  std::string candidates_file;  // one variant name a line; empty: what khub builds for the host
  std::string host_file;        // host JSON; empty: this machine (cli_host.h)
  std::string backend;          // override: `cpu` or the detected backend (also $KHUB_BACKEND)
  bool json = false;
  bool trace = false;
};

Expected<std::string> read_file(const std::string& path, std::string_view what) {
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in && !std::filesystem::is_directory(path, ec)) text << in.rdbuf();
  if (!in || std::filesystem::is_directory(path, ec)) return Error(ErrorCode::InvalidArgument, "cannot read " + std::string(what) + " '" + path + "'");
  return text.str();
}

Expected<HostInfo> load_host(const VariantsOptions& opts) {
  HostInfo host;
  if (opts.host_file.empty()) {
    std::vector<std::string> warnings;
    host = cli_host(&warnings);
    for (const std::string& w : warnings) std::cerr << "warning: " << w << '\n';
  } else {
    KHUB_TRY(std::string text, read_file(opts.host_file, "host file"));
    Expected<HostInfo> parsed = host_from_json(text);
    if (!parsed) return Error(parsed.error().code, opts.host_file + ": " + parsed.error().message);
    host = std::move(parsed).value();
  }
  if (opts.backend.empty()) return host;
  return with_backend(std::move(host), opts.backend);
}

// Blank lines and lines starting with '#' are skipped; a name that does not parse is an error that
// names its line, since a candidates file is written by hand.
Expected<std::vector<std::pair<std::string, Variant>>> load_candidates(const VariantsOptions& opts, const HostInfo& host) {
  std::vector<std::pair<std::string, Variant>> out;
  if (opts.candidates_file.empty()) {
    // A host whose cpu or os holds '-' yields names that do not parse; no build could match it anyway.
    for (std::string& name : default_candidates(host)) {
      if (Expected<Variant> v = parse_variant(name)) out.emplace_back(name, std::move(v).value());
    }
    return out;
  }
  KHUB_TRY(std::string text, read_file(opts.candidates_file, "candidates file"));
  if (text.find('\0') != std::string::npos)  // a binary given by mistake: say so, not echo it
    return Error(ErrorCode::InvalidArgument, opts.candidates_file + " is not a text file",
                 "pass a file with one variant name a line");
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos || line[begin] == '#') continue;
    const std::string name = line.substr(begin, line.find_last_not_of(" \t\r") + 1 - begin);
    Expected<Variant> v = parse_variant(name);
    if (!v) {
      return Error(ErrorCode::InvalidVariant,
                   opts.candidates_file + ":" + std::to_string(number) + ": " + v.error().message);
    }
    out.emplace_back(name, std::move(v).value());
  }
  return out;
}

std::string or_none(const std::optional<Version>& v) { return v ? v->str() : "none"; }

void print_text(std::ostream& out, const HostInfo& host, const Resolution& r, bool trace) {
  out << "host: " << host.os << ' ' << host.cpu << ", torch " << or_none(host.torch) << ", cxx11 abi "
      << (host.cxx11_abi ? (*host.cxx11_abi ? "yes" : "no") : "none") << ", backend " << host.backend.token()
      << ", tvm-ffi " << or_none(host.tvm_ffi);
  if (host.cuda_capability) out << ", gpu capability " << host.cuda_capability->str();
  if (host.rocm_arch) out << ", gpu arch " << *host.rocm_arch;
  if (host.os == "darwin") out << ", macos " << or_none(host.macos);
  out << "\naccepted (best first):" << (r.chosen() ? "" : " none") << '\n';
  for (const std::string& name : r.accepted()) out << "  " << name << '\n';
  out << "chosen: " << (r.chosen() ? r.chosen()->name : "none") << '\n';
  if (const Decision* loadable = first_loadable(r); loadable && loadable != r.chosen()) {
    out << "loadable without python: " << loadable->name << '\n';
  }
  if (trace || !r.chosen()) {
    out << "trace:\n";
    std::istringstream lines(r.trace());
    for (std::string line; std::getline(lines, line);) out << "  " << line << '\n';
  }
}

Json to_json(const HostInfo& host, const Resolution& r) {
  Json out;
  out["host"] = Json::parse(host_to_json(host));
  out["chosen"] = r.chosen() ? Json(r.chosen()->name) : Json(nullptr);
  const Decision* loadable = first_loadable(r);
  out["loadable"] = loadable ? Json(loadable->name) : Json(nullptr);
  out["accepted"] = r.accepted();
  out["trace"] = Json::array();
  for (const Decision& d : r.decisions) {
    out["trace"].push_back({{"variant", d.name}, {"accepted", d.accepted},
                            {"reason", d.accepted ? Json(nullptr) : Json(d.reason)}});
  }
  return out;
}

int run_variants(const VariantsOptions& opts) {
  Expected<HostInfo> host = load_host(opts);
  if (!host) return report_error(host.error());
  auto candidates = load_candidates(opts, *host);
  if (!candidates) return report_error(candidates.error());
  const Resolution r = resolve_parsed(std::move(candidates).value(), *host);
  print_result(opts.json, to_json(*host, r),
               [&](std::ostream& out, const Json&) { print_text(out, *host, r, opts.trace); });
  return r.chosen() ? kOk : kFailure;
}

void setup_variants(CLI::App& root) {
  auto opts = std::make_shared<VariantsOptions>();
  auto* cmd = root.add_subcommand("variants", "Show which build variants this host accepts, best first, and why");
  cmd->add_option("--candidates", opts->candidates_file,
                  "File with one variant name a line (default: the variants khub builds for this host)");
  cmd->add_option("--host", opts->host_file, "Host JSON (os, cpu, torch, cxx11_abi, backend, backend_version, "
                                             "tvm_ffi, macos) instead of detecting this machine");
  cmd->add_option("--backend", opts->backend, "Resolve for `cpu` or the detected backend")->envname("KHUB_BACKEND");
  cmd->add_flag("--json", opts->json, "Print host, chosen, loadable, accepted and trace as JSON");
  cmd->add_flag("--trace", opts->trace, "Also print the decision for every candidate");
  cmd->callback([opts] { set_exit_code(run_variants(*opts)); });
}

}  // namespace
KHUB_REGISTER_COMMAND("variants", setup_variants);
}  // namespace khub::cli
