#pragma once
// The connection layer under cpp-httplib's request parser: cpp-httplib 0.11 reads request lines
// and header sets without a bound, and serves each connection on one thread of a fixed pool for
// as long as the client keeps it open. GuardedServer replaces its per-connection loop:
//   * the request head (request line and headers) must fit in `max_head_bytes` and arrive within
//     `head_timeout` of its first byte (431 / 408, then close);
//   * a connection waiting for its next request is closed after `idle_timeout`;
//   * every connection gets its own worker from an elastic pool (up to `max_connections`, `keep_threads`
//     kept warm), so slow or idle connections never make another client wait for a thread; above
//     the cap a connection is answered 503 at once and closed;
//   * a request whose body was not read to its end (refused before the body, an unserved method,
//     a chunked body) closes the connection, so unread bytes are never parsed as a request.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

using SSL_CTX = struct ssl_ctx_st;

namespace khub::localhub {

struct ConnectionLimits {
  std::size_t max_head_bytes = 64u << 10;
  std::chrono::milliseconds head_timeout{10'000};
  std::chrono::milliseconds idle_timeout{15'000};
  std::chrono::milliseconds io_timeout{60'000};  // one read or write of a body
  std::size_t max_connections = 1024;
  std::size_t keep_threads = 64;
};

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(ConnectionLimits limits);
  ~GuardedServer() override;
  /// Serves HTTPS from now on: the PEM certificate chain and private key (TLS 1.2 or newer). The
  /// handshake must finish within the head time-out. Returns the OpenSSL error text on failure.
  [[nodiscard]] std::string use_tls(const std::string& cert_file, const std::string& key_file);
  [[nodiscard]] bool tls() const { return tls_ != nullptr; }
  /// Closes the connection serving the calling thread's request once its response is sent.
  static void close_after_response();
  /// Whether the calling thread's request came over TLS (base URLs in answers are then https).
  static bool request_is_tls();
  /// Widens the listen queue after a bind (cpp-httplib listens with a backlog of 5, so a burst
  /// of connects waits a second each for SYN retransmits).
  void widen_backlog(int backlog);
  /// Connections open now (being served or waiting for their next request).
  [[nodiscard]] std::size_t open_connections() const { return open_.load(); }

 private:
  bool process_and_close_socket(socket_t sock) override;
  ConnectionLimits limits_;
  std::atomic<std::size_t> open_{0};
  SSL_CTX* tls_ = nullptr;
};

}  // namespace khub::localhub
