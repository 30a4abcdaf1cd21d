#pragma once
// The one seam between khub and the network. Transport::perform sends one request and never follows
// redirects: every HTTP status is a response; only transport failures (connect, stall, time-out,
// dropped connection, an over-long answer) are errors. Decorators (tests that count or rewrite
// requests) implement the same interface.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "khub/base/error.h"
#include "khub/http/message.h"

namespace khub::http {

class Transport {
 public:
  virtual ~Transport() = default;
  /// Network on transport failure (message names method and redacted URL), Cancelled when a
  /// callback aborted, Io when a body file cannot be read, Protocol when a collected body passes
  /// `max_body`.
  [[nodiscard]] virtual Expected<Response> perform(const Request& request) = 0;
};

struct TransportOptions {
  std::string user_agent = "khub";  // sent unless the request has its own User-Agent
  // Certificate authorities trusted instead of the system's (TrustedCas): a PEM bundle, or else a
  // hashed certificate directory; both empty: the system's.
  std::filesystem::path ca_file;
  std::filesystem::path ca_dir;
};

/// libcurl: http and https only (redirect targets included), TLS verified, one connection pool with
/// DNS and TLS sessions shared between threads; safe to use from several threads at once.
[[nodiscard]] std::unique_ptr<Transport> make_curl_transport(TransportOptions options = {});

}  // namespace khub::http
