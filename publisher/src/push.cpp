#include "khub/publish/push.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cas_session.h"
#include "digest_claims.h"
#include "hub_api.h"
#include "khub/base/hash.h"
#include "khub/base/url.h"
#include "khub/protocol/build_config.h"
#include "khub/protocol/metadata.h"
#include "khub/publish/kernel_depends.h"
#include "khub/publish/upload_plan.h"
#include "xet_upload.h"

namespace khub::publish {
namespace {

using Json = nlohmann::json;

struct Target {
  std::string repo_id;
  std::string branch;
  std::uint64_t version = 0;
};

void say(const PushOptions& o, const std::string& line) {
  if (o.status) o.status(line);
}

// Metadata of every variant, one version across them, repo id (the flag, else build.toml's
// general.hub.repo-id) and branch (the flag, else general.hub.branch, else v<version>).
Expected<Target> resolve_target(const BuildTree& tree, const PushOptions& o) {
  std::map<std::uint64_t, std::vector<std::string>> versions;
  for (const auto& v : tree.variants) {
    KHUB_TRY(auto m, read_variant_metadata(v));
    versions[m.version].push_back(v.name);
  }
  if (versions.size() != 1) {
    std::string list;
    for (const auto& [n, names] : versions) list += (list.empty() ? "" : ", ") + std::to_string(n);
    return Error(ErrorCode::InvalidMetadata, "Found multiple versions in build variants: " + list);
  }
  Target t;
  t.version = versions.begin()->first;
  if (o.version && *o.version != t.version) {
    return Error(ErrorCode::InvalidArgument, "--version " + std::to_string(*o.version) +
                                                 " does not match metadata.json version " + std::to_string(t.version));
  }
  // A build.toml that is there but does not parse: its error (file, line) when the push needs it.
  std::optional<Error> config_error;
  auto read_config = [&](const std::filesystem::path& dir) -> std::optional<protocol::BuildConfig> {
    if (dir.empty() || !std::filesystem::exists(dir / "build.toml")) return std::nullopt;
    auto parsed = protocol::read_build_config(dir / "build.toml");
    if (!parsed) {
      if (!config_error) config_error = parsed.error();
      return std::nullopt;
    }
    return std::move(parsed).value();
  };
  const std::optional<protocol::BuildConfig> config = read_config(tree.kernel_dir);
  if (config_error && !o.branch) return *config_error;  // general.hub.branch may be in it
  t.repo_id = o.repo_id;
  if (t.repo_id.empty()) {
    const auto repo_config = config ? config : read_config(tree.parent_kernel_dir);
    if (!repo_config) {
      Error e(ErrorCode::InvalidArgument, "--repo is not provided and cannot parse build.toml.",
              "pass --repo <namespace>/<name>, or fix build.toml");
      if (config_error) e.note(config_error->message);
      return e;
    }
    if (!repo_config->hub_repo_id) {
      return Error(ErrorCode::InvalidArgument, "No `general.hub.repo-id` in build.toml. Use --repo to specify it.");
    }
    t.repo_id = *repo_config->hub_repo_id;
  }
  // A bare name is the token's user's repo (as the Hub creates it); push_build asks whoami.
  const auto slash = t.repo_id.find('/');
  const std::string_view ns = slash == std::string::npos ? "user" : std::string_view(t.repo_id).substr(0, slash);
  const std::string_view name = slash == std::string::npos ? std::string_view(t.repo_id)
                                                           : std::string_view(t.repo_id).substr(slash + 1);
  if (!is_valid_repo_name(ns) || !is_valid_repo_name(name) || name.find('/') != std::string_view::npos) {
    return Error(ErrorCode::InvalidArgument, "repo id must be <namespace>/<name> or <name>, got `" + t.repo_id + "`");
  }
  t.branch = o.branch ? *o.branch
             : (config && config->hub_branch) ? *config->hub_branch
                                               : "v" + std::to_string(t.version);
  if (!is_valid_ref_name(t.branch)) {  // before the Hub makes the repo and then refuses the name
    return Error(ErrorCode::InvalidArgument,
                 "branch '" + t.branch + "'" + (o.branch ? "" : " (general.hub.branch of build.toml)") +
                     " is not a valid branch name",
                 "use letters, digits, '-', '_', '.' and '/', e.g. v1 or release/2026-12");
  }
  return t;
}

std::string inline_content(const LocalFile& f) {
  std::ifstream in(f.source, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  const std::string bytes = s.str();
  return base64_encode(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

struct Chunk {
  std::vector<LocalFile> adds;
  std::vector<std::string> deletes;
};

std::vector<Chunk> chunk_plan(const BranchPlan& plan, std::size_t max_ops) {
  std::vector<Chunk> out;
  Chunk current;
  auto flush_if_full = [&] {
    if (current.adds.size() + current.deletes.size() >= max_ops) {
      out.push_back(std::move(current));
      current = {};
    }
  };
  for (const auto& d : plan.deletes) {
    current.deletes.push_back(d);
    flush_if_full();
  }
  for (const auto& a : plan.adds) {
    current.adds.push_back(a);
    flush_if_full();
  }
  if (!current.adds.empty() || !current.deletes.empty()) out.push_back(std::move(current));
  return out;
}

class Pusher {
 public:
  Pusher(const PushOptions& o, http::Transport& transport, detail::HubSession& hub, PushResult& result)
      : o_(o), transport_(transport), hub_(hub), result_(result) {}

  // Uploads one branch's plan in chunks; returns the last commit oid.
  Status push_branch(const BranchPlan& plan) {
    auto chunks = chunk_plan(plan, std::max<std::size_t>(1, o_.max_operations_per_commit));
    std::optional<int> pr;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const bool open_pr = o_.create_pr && !pr;
      const std::string revision = pr ? "refs/pr/" + std::to_string(*pr) : plan.branch;
      KHUB_TRY(auto modes, hub_.preupload(revision, chunks[i].adds, open_pr));
      std::vector<const LocalFile*> lfs, regular;
      for (const auto& f : chunks[i].adds) {
        const auto& info = modes[f.repo_path];
        if (!info.lfs || info.should_ignore) KHUB_CHECK(detail::confirm_claim(f));  // upload_content: the others
        if (info.should_ignore) continue;
        (info.lfs ? lfs : regular).push_back(&f);
      }
      KHUB_CHECK(upload_content(lfs, plan, revision, open_pr));
      std::string summary = "Uploaded using `" + o_.tool_name + "`" +
                            (chunks.size() > 1 ? " (batch " + std::to_string(i + 1) + "/" +
                                                     std::to_string(chunks.size()) + ")"
                                               : "") + ".";
      std::string ndjson = Json{{"key", "header"}, {"value", {{"summary", summary}, {"description", ""}}}}.dump() + "\n";
      for (const auto& d : chunks[i].deletes) {
        ndjson += Json{{"key", "deletedFile"}, {"value", {{"path", d}}}}.dump() + "\n";
      }
      for (const auto* f : lfs) {
        ndjson += Json{{"key", "lfsFile"},
                       {"value", {{"path", f->repo_path}, {"algo", "sha256"}, {"oid", f->sha256}, {"size", f->size}}}}
                      .dump() + "\n";
      }
      for (const auto* f : regular) {
        ndjson += Json{{"key", "file"},
                       {"value", {{"content", inline_content(*f)}, {"path", f->repo_path}, {"encoding", "base64"}}}}
                      .dump() + "\n";
        result_.bytes_uploaded += f->size;
      }
      KHUB_TRY(auto outcome, hub_.commit(revision, ndjson, open_pr));
      ++result_.commits;
      result_.files_uploaded += lfs.size() + regular.size();
      result_.files_deleted += chunks[i].deletes.size();
      if (plan.branch == result_.branch) result_.commit = outcome.commit_oid;
      if (open_pr) {
        if (!outcome.pr_number) return Error(ErrorCode::Protocol, "commit opened no pull request (no pullRequestUrl)");
        pr = outcome.pr_number;
        result_.pull_requests.push_back({plan.branch, outcome.pr_url});
      }
    }
    return {};
  }

 private:
  // The files preupload called "lfs": through Xet while the Hub offers it, else through LFS.
  Status upload_content(const std::vector<const LocalFile*>& all, const BranchPlan& plan, const std::string& revision,
                        bool open_pr) {
    // Each object once per push, however many paths share its bytes.
    std::vector<const LocalFile*> files;
    for (const auto* f : all) {
      if (sent_oids_.insert(f->sha256).second) {
        files.push_back(f);
      } else {
        KHUB_CHECK(detail::confirm_claim(*f));  // its bytes are not read for an upload
      }
    }
    if (files.empty()) return {};
    if (xet_offered_) {
      KHUB_TRY(auto cas, hub_.xet_write_token(revision, open_pr));
      if (cas) return upload_xet(files, plan, std::move(*cas), revision, open_pr);
      xet_offered_ = false;  // asked once per push
      say(o_, "The Hub offers no Xet storage for `" + plan.branch + "`: uploading with LFS");
    }
    return upload_lfs(files, o_.create_pr ? std::nullopt : std::optional<std::string>(plan.branch));
  }

  Status upload_xet(const std::vector<const LocalFile*>& files, const BranchPlan& plan, xet::CasConnection cas,
                    const std::string& revision, bool open_pr) {
    result_.transfer = "xet";
    auto renew = [this, revision, open_pr]() -> Expected<xet::CasConnection> {
      KHUB_TRY(auto again, hub_.xet_write_token(revision, open_pr));
      if (!again) return Error(ErrorCode::Protocol, "the Hub stopped offering Xet tokens during the upload");
      return std::move(*again);
    };
    // Xorbs go up from several threads: one status line at a time.
    const http::RetryNotice notice = [this](std::string_view what, int attempt, int of, std::chrono::milliseconds wait) {
      std::lock_guard lock(say_mutex_);
      say(o_, http::retry_line(what, attempt, of, wait));
    };
    detail::CasSession session(transport_, std::move(cas), renew, o_.retry, notice);
    detail::XetUploadOptions options;
    options.say = [this](std::string_view line) {
      std::lock_guard lock(say_mutex_);
      say(o_, std::string(line));
    };
    KHUB_TRY(auto sent, detail::upload_with_xet(session, files, plan.replaced_xet, options));
    result_.bytes_uploaded += sent.bytes_sent;
    result_.bytes_deduplicated += sent.bytes_deduplicated;
    return {};
  }

  Status upload_lfs(const std::vector<const LocalFile*>& files, const std::optional<std::string>& ref) {
    if (result_.transfer.empty()) result_.transfer = "lfs";
    for (const auto* f : files) KHUB_CHECK(detail::confirm_claim(*f));  // the batch names each by its sha256
    for (std::size_t start = 0; start < files.size(); start += 256) {
      std::vector<const LocalFile*> batch(files.begin() + static_cast<std::ptrdiff_t>(start),
                                          files.begin() + static_cast<std::ptrdiff_t>(std::min(files.size(), start + 256)));
      KHUB_TRY(auto actions, hub_.lfs_batch(batch, ref));
      for (const auto* f : batch) {
        auto it = std::find_if(actions.begin(), actions.end(), [&](const auto& a) { return a.oid == f->sha256; });
        if (it == actions.end()) return Error(ErrorCode::Protocol, "LFS batch answered nothing for " + f->repo_path);
        if (!it->needs_upload) {
          result_.bytes_deduplicated += f->size;  // the Hub stores these bytes already
          continue;
        }
        KHUB_TRY(auto sent, hub_.lfs_upload(*f, *it));
        result_.bytes_uploaded += sent;
      }
    }
    return {};
  }

  const PushOptions& o_;
  http::Transport& transport_;
  detail::HubSession& hub_;
  PushResult& result_;
  std::set<std::string> sent_oids_;
  bool xet_offered_ = true;  // until the Hub says otherwise
  std::mutex say_mutex_;
};

std::string tree_url(const PushOptions& o, const std::string& repo, const std::string& branch) {
  std::string base = o.endpoint;
  while (base.ends_with('/')) base.pop_back();
  if (base == "https://huggingface.co") base = "https://hf.co";
  return base + "/" + std::string(url_prefix(o.repo_type)) + repo + "/tree/" + branch;
}

}  // namespace

Expected<PushResult> push_build(const BuildTree& tree, const PushOptions& o, http::Transport& transport) {
  if (o.repo_type != RepoType::Kernel && o.repo_type != RepoType::Model) {
    return Error(ErrorCode::InvalidArgument,
                 "--repo-type must be kernel or model, got `" + std::string(to_string(o.repo_type)) + "`");
  }
  say(o, "Found " + std::to_string(tree.variants.size()) + " build variant(s) in " + tree.variants_dir.string());
  KHUB_TRY(auto target, resolve_target(tree, o));
  // kernel-depends from build.toml into each variant's metadata.json, before the checks read them.
  if (auto config = find_build_config(tree); !config) {
    say(o, "warning: kernel-depends not written into metadata.json: " + config.error().message);
  } else if (*config) {
    KHUB_TRY(auto changes, sync_kernel_depends(tree, **config, !o.dry_run));
    for (const auto& c : changes)
      say(o, std::string(o.dry_run ? "Would write" : "Wrote") + " kernel-depends from build.toml into " + c.variant +
                 "/metadata.json (" + std::to_string(c.after.size()) + " entries, was " +
                 std::to_string(c.before.size()) + ")");
  }
  if (o.run_checks) {
    CheckOptions check = o.check;
    check.abi = check.abi && o.abi_policy != PushOptions::AbiPolicy::Off;
    check.digest_hashes = HashReuse::Unchanged;  // the plan and the Xet scan reuse these sha256
    check.digest_claims = true;                  // large files: read once, by the upload
    KHUB_TRY(auto report, check_build(tree, check));
    if (o.abi_policy == PushOptions::AbiPolicy::Warn) {
      for (auto& f : report.findings) {
        if (f.check == "manylinux" || f.check == "abi3" || f.check == "libraries" || f.check == "torch-stable-abi") {
          f.severity = Severity::Warning;
          say(o, "warning: " + f.file + ": " + f.message);
        }
      }
    }
    KHUB_CHECK(require_clean(report, tree.kernel_dir));
    std::vector<std::string> dirty;
    for (const auto& f : report.findings) {
      if (f.check == "provenance") dirty.push_back(f.file.substr(0, f.file.find('/')));
    }
    if (!dirty.empty()) {
      std::string list;
      for (const auto& d : dirty) list += (list.empty() ? "" : ", ") + d;
      say(o, "warning: built from a dirty git tree: " + list);
    }
  }
  KHUB_TRY(auto local, collect_local_files(tree, o.run_checks));
  if (o.token.empty() && !o.dry_run) {
    return Error(ErrorCode::Unauthorized, "no Hub token", "set HF_TOKEN to a token with write access");
  }

  const http::RetryNotice notice = [&o](std::string_view what, int attempt, int of, std::chrono::milliseconds wait) {
    say(o, http::retry_line(what, attempt, of, wait));
  };
  if (target.repo_id.find('/') == std::string::npos) {
    if (o.token.empty()) {
      return Error(ErrorCode::InvalidArgument, "repo id `" + target.repo_id + "` has no namespace",
                   "pass <namespace>/" + target.repo_id + ", or set HF_TOKEN so that the Hub names your user");
    }
    detail::HubSession account(transport, o.endpoint, o.token, o.repo_type, "", o.retry, notice);
    KHUB_TRY(auto user, account.whoami());
    target.repo_id = user + "/" + target.repo_id;
    say(o, "Repo `" + target.repo_id + "` (the token's user)");
  }

  PushResult result;
  result.repo = target.repo_id;
  result.branch = target.branch;
  for (const auto& v : tree.variants) result.variants.push_back(v.name);
  detail::HubSession hub(transport, o.endpoint, o.token, o.repo_type, target.repo_id, o.retry, notice);

  if (!o.create_pr && !o.dry_run) KHUB_CHECK(hub.create_repo(o.is_private));
  std::map<std::string, std::string> branches;
  if (auto listed = hub.branches(); listed) {
    branches = std::move(listed).value();
  } else if (!(o.dry_run && listed.error().code == ErrorCode::RepoNotFound)) {
    return std::move(listed).error();
  }
  const bool exists = branches.contains(target.branch);
  if (!exists) {
    // As kernel-builder: a pull request to a missing branch first tries to create the branch, and
    // only a failure to (no write access) says to ask a maintainer.
    if (!o.dry_run) {
      if (auto created = hub.create_branch(target.branch); !created) {
        if (!o.create_pr) return std::move(created).error();
        return Error(created.error().code,
                     "Pull requests can only target an existing branch. Ask a maintainer of `" + target.repo_id +
                         "` to create the branch `" + target.branch + "` first.")
            .note(created.error().message);
      }
    }
    result.branch_created = true;
    say(o, "Using branch `" + target.branch + "` (new)");
  } else {
    say(o, "Using branch `" + target.branch + "`");
  }

  PlanInput input;
  input.branch = target.branch;
  input.new_branch = result.branch_created;
  input.variants = result.variants;
  input.build_files = std::move(local.build);
  input.benchmark_files = std::move(local.benchmarks);
  input.readme = std::move(local.readme);
  // Listing errors count as an empty branch (as upstream); a new branch starts as a copy of main.
  const std::string listed_rev = (result.branch_created && o.dry_run) ? "main" : target.branch;
  if (auto files = hub.list_files(listed_rev); files) input.remote_branch = std::move(files).value();
  if (input.readme && target.branch != "main") {
    if (auto files = hub.list_files("main"); files) input.remote_main = std::move(files).value();
  }
  auto plans = plan_upload(input);
  for (const auto& p : plans) result.files_unchanged += p.unchanged;
  // Claimed files the push will not read for an upload are read now: every one before any commit.
  std::set<std::string> uploaded;
  if (!o.dry_run) {
    for (const auto& p : plans)
      for (const auto& a : p.adds) uploaded.insert(a.repo_path);
  }
  for (const auto& f : input.build_files) {
    if (!uploaded.contains(f.repo_path)) KHUB_CHECK(detail::confirm_claim(f));
  }
  result.url = tree_url(o, target.repo_id, target.branch);

  if (o.dry_run) {
    for (const auto& p : plans) {
      result.files_uploaded += p.adds.size();
      result.files_deleted += p.deletes.size();
      for (const auto& a : p.adds) result.bytes_uploaded += a.size;
    }
    result.status = "dry_run";
    return result;
  }
  Pusher pusher(o, transport, hub, result);
  for (const auto& p : plans) {
    if (p.operation_count() == 0) continue;
    auto pushed = pusher.push_branch(p);
    if (pushed) continue;
    Error e = std::move(pushed).error();
    if (p.branch == target.branch && result.branch_created) {
      // No half-made version: a branch this push created goes again, so loaders never find a
      // v<N> with part of a build (or none); an existing branch keeps what landed (a re-run of
      // the push uploads the rest).
      if (auto gone = hub.delete_branch(target.branch); gone) {
        e.note("the new branch `" + target.branch + "` was deleted again");
      } else {
        e.note("the new branch `" + target.branch + "` could not be deleted: " + gone.error().message);
      }
    }
    return e;
  }
  if (result.commit.empty() && !o.create_pr) {
    if (auto heads = hub.branches(); heads && heads->contains(target.branch)) result.commit = heads->at(target.branch);
  }
  if (result.commits == 0) {
    say(o, "No changes to upload.");
    result.status = "no_changes";
  } else {
    result.status = o.create_pr ? "pull_request_created" : "uploaded";
  }
  return result;
}

}  // namespace khub::publish
