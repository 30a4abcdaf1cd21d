// khub serve: runs the Hub-compatible local server (offline use, air-gapped teams, tests).
//   khub serve --root DIR [--port P] [--host 127.0.0.1] [--config FILE] [--token T[:read|:write]]…
//              [--trust ORG]… [--fault 'PATTERN=ACTION[,count=N]']…
//   khub serve --root DIR --gc [--grace SECONDS] [--dry-run] [--json]
// Prints "khub serve: listening on http://HOST:PORT" on stdout, one line per request on stderr,
// and stops cleanly on SIGINT/SIGTERM. With --gc it collects the store's garbage and exits; that is
// safe while another `khub serve` serves the same store.
#include "command.h"

#if KHUB_HAVE_SERVER
#include <signal.h>

#include <iostream>
#include <mutex>

#include "khub/localhub/server.h"
#include "khub/localhub/store.h"
#include "output.h"

namespace khub::cli {
namespace {

struct ServeOptions {
  std::string root;
  std::string host = "127.0.0.1";
  int port = 0;
  std::string config;
  std::string tls_cert, tls_key;
  std::vector<std::string> tokens;
  std::vector<std::string> trust;
  std::vector<std::string> faults;
  bool quiet = false;
  bool gc = false;
  long long grace_s = 3600;
  bool dry_run = false;
  bool json = false;
};

int run_gc(const ServeOptions& o) {
  if (o.grace_s < 0) return report_error(Error(ErrorCode::InvalidArgument, "--grace must be >= 0 seconds"));
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(o.root) / "hub.sqlite3", ec))  // a typo must not make a store
    return report_error(Error(ErrorCode::InvalidArgument, "--root " + o.root + " holds no khub store",
                              "pass the folder a `khub serve --root` wrote"));
  localhub::StoreOptions store_options;
  store_options.remove_leftovers = false;  // another server's uploads in flight live there
  auto store = localhub::RepoStore::open(o.root, std::move(store_options));
  if (!store) return report_error(store.error());
  localhub::GcOptions gc;
  gc.grace = std::chrono::seconds(o.grace_s);
  gc.dry_run = o.dry_run;
  auto r = (*store)->collect_garbage(gc);
  if (!r) return report_error(r.error());
  const Json report = {{"dry_run", o.dry_run},
                       {"trees_removed", r->trees_removed},
                       {"blobs_removed", r->blobs_removed},
                       {"bytes_removed", r->bytes_removed},
                       {"blobs_kept", r->blobs_kept},
                       {"blobs_kept_young", r->blobs_kept_young},
                       {"uploads_removed", r->uploads_removed},
                       {"xorbs_removed", r->xorbs_removed}};
  print_result(o.json, report, [&](std::ostream& out, const Json& j) {
    out << (o.dry_run ? "would remove " : "removed ") << j["trees_removed"] << " unused tree(s), "
        << j["blobs_removed"] << " unreferenced blob(s) (" << j["bytes_removed"] << " bytes), "
        << j["uploads_removed"] << " abandoned upload(s), " << j["xorbs_removed"] << " unused Xet xorb(s); kept " << j["blobs_kept"] << " blob(s) in use and "
        << j["blobs_kept_young"] << " younger than " << o.grace_s << " s\n";
  });
  return kOk;
}

Expected<localhub::ServerOptions> build_options(const ServeOptions& o) {
  localhub::ServerOptions s;
  s.root = o.root;
  s.host = o.host;
  s.port = o.port;
  if (!o.tls_cert.empty()) KHUB_CHECK(check_input_file("--tls-cert", o.tls_cert));
  if (!o.tls_key.empty()) KHUB_CHECK(check_input_file("--tls-key", o.tls_key));
  s.tls_cert = o.tls_cert;
  s.tls_key = o.tls_key;
  if (!o.config.empty()) {
    KHUB_CHECK(check_input_file("--config", o.config));
    KHUB_TRY(s.config, localhub::load_config(o.config));
  }
  for (const auto& t : o.tokens) {
    KHUB_TRY(auto grant, localhub::parse_token_flag(t));
    s.config.tokens.push_back(std::move(grant));
  }
  for (const auto& org : o.trust) s.config.trusted_orgs.push_back(org);
  for (const auto& f : o.faults) {
    KHUB_TRY(auto rule, localhub::parse_fault(f));
    s.config.faults.push_back(std::move(rule));
  }
  if (!o.quiet) {
    s.request_log = [](std::string_view line) {
      static std::mutex mutex;
      std::lock_guard lock(mutex);
      std::cerr << line << '\n';
    };
  }
  return s;
}

int run_serve(const ServeOptions& o) {
  if (o.gc) return run_gc(o);
  auto options = build_options(o);
  if (!options) return report_error(options.error());
  // Block the stop signals before any thread starts, then wait for them on this thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const bool clear_on_network = !localhub::is_loopback_host(o.host) && o.tls_cert.empty();
  localhub::Server server(std::move(*options));
  if (auto st = server.start(); !st) return report_error(st.error());
  if (clear_on_network) {
    std::cerr << "khub serve: warning: serving plain HTTP on " << o.host
              << ": tokens travel in clear over the network; pass --tls-cert FILE --tls-key FILE\n";
  }
  std::cout << "khub serve: listening on " << server.url() << std::endl;
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::cerr << "khub serve: " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << ", stopping\n";
  server.stop();
  return kOk;
}

void setup_serve(CLI::App& root) {
  auto opts = std::make_shared<ServeOptions>();
  auto* cmd = root.add_subcommand("serve", "Run a Hub-compatible local server (kernel and model repos)");
  cmd->add_option("--root", opts->root, "Store folder (created when absent)")->required();
  cmd->add_option("--port", opts->port, "TCP port; 0 picks a free one (printed)")->capture_default_str();
  cmd->add_option("--host", opts->host, "Address to bind; non-loopback needs a token")->capture_default_str();
  cmd->add_option("--config", opts->config, "JSON config file (tokens, trusted orgs, limits, faults)");
  cmd->add_option("--tls-cert", opts->tls_cert, "Serve HTTPS: PEM certificate chain (with --tls-key)");
  cmd->add_option("--tls-key", opts->tls_key, "Serve HTTPS: PEM private key of --tls-cert");
  cmd->add_option("--token", opts->tokens, "Accepted token, TOKEN[:read|:write] (default write); repeatable");
  cmd->add_option("--trust", opts->trust, "Organisation reported as trustedKernelPublisher; repeatable");
  cmd->add_option("--fault", opts->faults,
                  "Inject a fault: 'PATTERN=drop-mid-body|500|503|429[:S]|slow:MS|ignore-range|wrong-size|"
                  "wrong-etag[,count=N]'; repeatable");
  cmd->add_flag("-q,--quiet", opts->quiet, "Do not log requests");
  auto* gc = cmd->add_flag("--gc", opts->gc,
                "Delete what no commit reaches (deleted repos' trees, unreferenced blobs, abandoned uploads) and "
                "exit; safe beside a running server");
  cmd->add_option("--grace", opts->grace_s, "With --gc: keep unreferenced blobs and uploads younger than this (s)")
      ->capture_default_str()
      ->needs(gc);
  cmd->add_flag("--dry-run", opts->dry_run, "With --gc: count what would be removed, remove nothing")->needs(gc);
  cmd->add_flag("--json", opts->json, "With --gc: print the report as JSON")->needs(gc);
  cmd->callback([opts] { set_exit_code(run_serve(*opts)); });
}

}  // namespace
KHUB_REGISTER_COMMAND("serve", setup_serve);
}  // namespace khub::cli
#endif  // KHUB_HAVE_SERVER
