#pragma once
// The Hub-compatible HTTP server: kernel and model repos, resolve with Hub headers, the upload
// flow (preupload, Git LFS batch, NDJSON commit), refs, trees, org overview and whoami.
//   Server server({.root = dir});           // port 0 = any free port on 127.0.0.1
//   if (auto st = server.start(); !st) ...  // listening when it returns
//   client.get(server.url() + "/api/...");
//   server.stop();
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "khub/base/error.h"
#include "khub/localhub/config.h"
#include "khub/localhub/store.h"

namespace khub::localhub {

struct ServerOptions {
  std::filesystem::path root;  // store folder, created when absent
  std::string host = "127.0.0.1";
  int port = 0;  // 0 = pick a free port
  /// HTTPS: a PEM certificate chain and its private key (both or neither). url() is then https.
  std::filesystem::path tls_cert, tls_key;
  ServerConfig config;
  // Connections (docs/localhub.md, "Limits"): each open connection has its own worker thread;
  // `threads` of them are kept ready, more are made on demand up to `max_connections`, beyond
  // which a connection is answered 503 and closed. A request's line and headers must fit in
  // `max_header_bytes` and arrive within `header_timeout_s` of their first byte; a connection
  // waits `idle_timeout_s` for its next request.
  int threads = 64;
  int max_connections = 1024;
  std::size_t max_header_bytes = 64 * 1024;
  int header_timeout_s = 10;
  int idle_timeout_s = 15;
  /// Lifetime of the Xet access tokens `xet-read-token` / `xet-write-token` mint (clients refresh
  /// them through the same route before they expire).
  int xet_token_seconds = 3600;
  /// Receives one line per request ("127.0.0.1 GET /api/... 200 123B 1.2ms"); may be empty.
  std::function<void(std::string_view line)> request_log;
  StoreOptions store;
};

/// True for 127.0.0.0/8, ::1 and "localhost".
[[nodiscard]] bool is_loopback_host(std::string_view host);

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Locks the root (ROOT/serve.lock, flock: one server per root; Conflict when another holds
  /// it), opens the store, binds and starts serving on a background thread. InvalidArgument when
  /// asked to bind a non-loopback address with no token configured; Io/Network on failure.
  [[nodiscard]] Status start();
  /// Bound port (valid after start()).
  [[nodiscard]] int port() const;
  /// "http://host:port", or "https://host:port" with TLS.
  [[nodiscard]] std::string url() const;
  /// Blocks until stop() is called from another thread or a signal handler thread.
  void wait();
  /// Stops accepting, finishes in-flight requests, closes the store. Idempotent.
  void stop();
  [[nodiscard]] RepoStore& store();

 private:
  Status start_locked();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace khub::localhub
