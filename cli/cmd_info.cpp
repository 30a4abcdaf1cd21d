// khub info REPO: what the Hub says about a kernel at a version or revision — commit, publisher
// trust, variants, the one this host takes and its metadata. Exit 0 ok, 1 failure, 2 usage.
#include "hub_cli.h"

namespace khub::cli {
namespace {

Json to_json(const hub::KernelSummary& s) {
  Json out = {{"repo_id", s.at.repo.id}, {"repo_type", khub::to_string(s.at.repo.type)},
              {"revision", s.at.name()}, {"commit", s.at.commit}};
  if (s.trusted_publisher != hub::PublisherTrust::NotAsked) {
    out["trusted_publisher"] = s.trusted_publisher == hub::PublisherTrust::Unknown ? Json(nullptr)
                               : Json(s.trusted_publisher == hub::PublisherTrust::Trusted);
  }
  out["variants"] = s.variants;
  out["host_variant"] = or_null(s.host_variant);
  if (const auto& meta = s.metadata) {
    out["metadata"] = {{"name", meta->name}, {"id", meta->id}, {"version", meta->version},
                       {"license", meta->license}, {"backend", protocol::to_string(meta->backend.type)},
                       {"archs", meta->backend.archs.value_or(std::vector<std::string>{})},
                       {"digest", meta->digest.has_value()}, {"kernel_depends", Json::array()}};
    for (const auto& d : meta->kernel_depends) {
      Json dep = {{"repo-id", d.repo_id}};
      if (d.version) dep["version"] = *d.version;
      else dep["revision"] = d.revision.value_or("");
      out["metadata"]["kernel_depends"].push_back(std::move(dep));
    }
  }
  return out;
}

void print_text(std::ostream& out, const Json& j) {
  out << j["repo_id"].get<std::string>() << " (" << j["repo_type"].get<std::string>() << ")  "
      << j["revision"].get<std::string>() << " = " << j["commit"].get<std::string>() << '\n';
  if (j.contains("trusted_publisher"))
    out << "trusted publisher: "
        << (j["trusted_publisher"].is_null() ? "unknown" : j["trusted_publisher"].get<bool>() ? "yes" : "no") << '\n';
  out << "variants: " << j["variants"].size()
      << "\nthis host: " << (j["host_variant"].is_null() ? "none" : j["host_variant"].get<std::string>()) << '\n';
  if (j.contains("metadata")) out << "metadata: " << j["metadata"].dump() << '\n';
}

int run_info(const RepoQueryOptions& opts) {
  auto options = client_options(opts.hub);
  if (!options) return report_error(options.error());
  hub::HubClient client(*options);
  auto host = host_for(opts.hub);
  if (!host) return report_error(host.error());
  auto summary = hub::summarize_kernel(client, lookup_for(opts.repo, opts.hub), *host);
  if (!summary) return report_error(summary.error());
  print_result(opts.hub.json, to_json(*summary), print_text);
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
