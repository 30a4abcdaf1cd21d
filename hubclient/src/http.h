#pragma once
// Private: one libcurl transport with a shared connection pool (connections, DNS and TLS sessions
// shared between threads through a curl share handle). HTTP statuses are responses, not errors;
// only transport failures (connect, timeout, dropped connection) return Network.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "khub/base/error.h"

namespace khub::hub::detail {

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; a repeated header keeps the last
  std::string body;                            // collected unless the request streams it
  std::string url;
  [[nodiscard]] std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
  [[nodiscard]] bool is_redirect() const { return status >= 300 && status < 400 && status != 304; }
};

struct HttpRequest {
  std::string method = "GET";  // GET | HEAD | POST
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // POST body
  std::chrono::milliseconds timeout{10000};  // connect timeout and longest stall
  bool total_timeout = true;                 // API calls: also cap the whole exchange at 3 × timeout
  int max_retries = -1;                      // transient failures retried; -1: ClientOptions::max_retries
  // Streams the body of a 2xx response (redirect and error bodies are still collected). Called
  // first with the final status and headers (on_start), then per chunk; returning false aborts.
  std::function<bool(const HttpResponse&)> on_start;
  std::function<bool(std::string_view)> on_body;
};

class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// Performs one exchange, no redirect following. Network on transport failure (message names
  /// method and URL, redacted), Cancelled when a callback aborted.
  [[nodiscard]] Expected<HttpResponse> perform(const HttpRequest& request);
  [[nodiscard]] std::uint64_t request_count() const noexcept { return requests_.load(); }

 private:
  struct Pool;
  std::unique_ptr<Pool> pool_;
  std::atomic<std::uint64_t> requests_{0};
};

/// "scheme://host[:port]" of a URL, lower-cased; empty for a relative URL.
[[nodiscard]] std::string url_origin(std::string_view url);
/// Whether `url` starts with a scheme ("https://…"); "/a?next=http://x" is relative.
[[nodiscard]] bool has_scheme(std::string_view url);
/// Whether url is http:// or https:// (any case): the only schemes khub follows or sends.
[[nodiscard]] bool is_http_url(std::string_view url);
/// Resolves a Location header against the URL it came from.
[[nodiscard]] std::string join_url(std::string_view base, std::string_view location);

}  // namespace khub::hub::detail
