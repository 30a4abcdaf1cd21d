#pragma once
// Shared by the hub client commands (download, verify, info, versions, lock): the flags that say
// where to look (version/revision, repo type, cache, host) and the client options and repo lookup
// they build, plus a progress bar drawn on stderr only when it is a terminal.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>

#include "cli_host.h"
#include "command.h"
#include "khub/base/fs.h"
#include "khub/http/retry.h"
#include "khub/hub/hub_client.h"
#include "khub/hub/lookup.h"
#include "khub/hub/options.h"
#include "khub/variants/host.h"
#include "output.h"

namespace khub::cli {

struct HubFlags {
  std::optional<int> version;
  std::string revision;
  std::string repo_type;  // kernel | model; empty = kernel with model fallback
  std::optional<std::string> cache_dir;
  std::string host_file;  // host JSON instead of detection
  std::string torch;      // "2.12": the torch the kernel will be loaded with (no torch in this CLI)
  std::string backend;
  bool json = false;
  bool quiet = false;
};

inline void add_hub_flags(CLI::App* cmd, HubFlags& f, bool revisions = true) {
  if (revisions) {
    auto* v = cmd->add_option("--version", f.version, "Kernel version (branch v<N>)")->check(CLI::Range(0, 1000000));
    cmd->add_option("--revision", f.revision, "Branch, tag or commit")->excludes(v)->check(kNotEmpty);
  }
  cmd->add_option("--repo-type", f.repo_type, "kernel or model (default: kernel, falling back to model)")
      ->check(CLI::IsMember({"kernel", "model"}));
  cmd->add_option("--cache-dir", f.cache_dir, "Cache root (default: KERNELS_CACHE, HF_HUB_CACHE, …)");
  cmd->add_option("--host", f.host_file, "Host JSON to choose for: os, cpu, torch, cxx11_abi, backend, backend_version, tvm_ffi, macos (null where "
                  "absent), optional cuda_capability and rocm_arch");
  cmd->add_option("--torch", f.torch, "Torch major.minor the kernel will run with (default: the LibTorch khub was built with)");
  cmd->add_option("--backend", f.backend, "Choose for `cpu` or the detected backend");
  cmd->add_flag("--json", f.json, "Print the result as JSON");
  cmd->add_flag("-q,--quiet", f.quiet, "No progress output");
}

// Progress on stderr: a percentage line on a terminal, and a line before each retry everywhere
// (a CI log too), so a Hub that does not answer is not 23 s of silence. None for -q or --json.
class TerminalProgress : public hub::ProgressSink {
 public:
  static std::shared_ptr<hub::ProgressSink> make(const HubFlags& f) {
    if (f.quiet || f.json) return nullptr;
    return std::make_shared<TerminalProgress>(::isatty(2) != 0);
  }
  explicit TerminalProgress(bool terminal) : terminal_(terminal) {}
  void on_retry(std::string_view what, int attempt, int of, std::chrono::milliseconds wait) override {
    std::lock_guard<std::mutex> g(mutex_);
    std::fprintf(stderr, "%s%s\n", terminal_ ? "\r\033[K" : "", http::retry_line(what, attempt, of, wait).c_str());
  }
  bool on_bytes(std::string_view path, std::uint64_t done, std::uint64_t total) override {
    if (!terminal_) return true;
    std::lock_guard<std::mutex> g(mutex_);
    int pct = total ? static_cast<int>(done * 100 / total) : 100;
    if (pct == last_pct_ && path == last_path_) return true;
    last_pct_ = pct;
    last_path_ = std::string(path);
    std::fprintf(stderr, "\r\033[K%3d%% %s", pct, last_path_.c_str());
    return true;
  }
  void on_complete(std::string_view path) override {
    if (!terminal_) return;
    std::lock_guard<std::mutex> g(mutex_);
    std::fprintf(stderr, "\r\033[K  done %.*s\n", static_cast<int>(path.size()), path.data());
  }

 private:
  const bool terminal_;
  std::mutex mutex_;
  int last_pct_ = -1;
  std::string last_path_;
};

inline Expected<hub::ClientOptions> client_options(const HubFlags& f) {
  KHUB_TRY(auto o, hub::ClientOptions::from_environment());
  if (f.cache_dir) {
    if (f.cache_dir->empty())
      return Error(ErrorCode::InvalidArgument, "--cache-dir is empty", "name a folder, or leave the flag out");
    o.cache_dir = *f.cache_dir;
  }
  o.progress = TerminalProgress::make(f);
  return o;
}

/// The repo and revision the flags name: --repo-type fixes the type (else a kernel repo, a missing
/// one retried as a legacy model repo), --version or --revision the revision (else `when_unnamed`).
inline hub::RepoLookup lookup_for(const std::string& repo_id, const HubFlags& f,
                                  hub::RepoLookup::Default when_unnamed = hub::RepoLookup::Default::NewestVersion) {
  hub::RepoLookup lookup;
  lookup.repo_id = repo_id;
  if (!f.repo_type.empty()) lookup.type = hub::parse_repo_type(f.repo_type).value();  // CLI11 checked it
  lookup.version = f.version;
  lookup.revision = f.revision;
  lookup.when_unnamed = when_unnamed;
  return lookup;
}

inline Expected<variants::HostInfo> host_for(const HubFlags& f) {
  variants::HostInfo host;
  if (!f.host_file.empty()) {
    KHUB_TRY(auto text, read_file(f.host_file));
    KHUB_TRY(host, variants::host_from_json(text));
  } else {
    host = cli_host();
  }
  if (!f.torch.empty()) {
    auto dot = f.torch.find('.');
    if (dot == std::string::npos)
      return Error(ErrorCode::InvalidArgument, "--torch '" + f.torch + "': expected major.minor, e.g. 2.12");
    host.torch = variants::Version{std::atoi(f.torch.c_str()), std::atoi(f.torch.c_str() + dot + 1)};
    if (host.os == "linux" && !host.cxx11_abi) host.cxx11_abi = true;
  }
  if (f.backend.empty()) return host;
  return variants::with_backend(host, f.backend);
}

/// The inputs of the commands that only read one repo (info, versions): its id and the hub flags.
struct RepoQueryOptions {
  std::string repo;
  HubFlags hub;
};

}  // namespace khub::cli
