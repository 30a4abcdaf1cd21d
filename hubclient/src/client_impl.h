#pragma once
// Private state of HubClient shared by hub_client.cpp (API calls) and transfer.cpp (HEAD/GET).
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "http.h"
#include "khub/hub/hub_client.h"

namespace khub::hub {

struct HubClient::Impl {
  ClientOptions options;
  detail::HttpClient http;
  std::string user_agent;
  std::string endpoint_origin;
  std::mutex memo_mutex;
  std::map<std::string, bool> trusted_orgs;
  std::uint64_t instance_id = 0;

  explicit Impl(ClientOptions o);

  /// Request headers for `url`: User-Agent always, Authorization only for Hub hosts.
  [[nodiscard]] std::vector<std::string> headers_for(const std::string& url) const;
  [[nodiscard]] bool is_hub_host(const std::string& url) const;
  /// Performs with the retry schedule of hub-protocol §2.10 (transport errors, 408, 429, 5xx).
  [[nodiscard]] Expected<detail::HttpResponse> send(const detail::HttpRequest& request);
  /// How long to wait before retry `attempt` (0-based) after `response` (may be null).
  [[nodiscard]] std::chrono::milliseconds retry_wait(int attempt, const detail::HttpResponse* response) const;
  /// Tells the progress sink (attempt counted from 0 here, from 1 there), then sleeps.
  void pause_before_retry(const std::string& what, int attempt, int of, std::chrono::milliseconds wait);
  [[nodiscard]] Error offline_error(std::string_view what) const;
};

/// What a 404 means where it happened (hub-protocol §2.9 matching order).
struct ErrorContext {
  const RepoRef* repo = nullptr;
  std::string_view revision;
  std::string_view path;
};

/// Maps a non-2xx response to a khub Error: one line naming the object, then method, redacted URL,
/// status and request id; the server's message as a note.
[[nodiscard]] Error http_error(std::string_view method, const std::string& url, const detail::HttpResponse& res,
                               const ErrorContext& context);

/// Retry-worthy statuses: 408, 429, 500, 502, 503, 504.
[[nodiscard]] bool is_retryable_status(long status) noexcept;

}  // namespace khub::hub
