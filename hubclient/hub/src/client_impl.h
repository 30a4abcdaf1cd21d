#pragma once
// Private state of HubClient shared by hub_client.cpp (API calls) and transfer.cpp (HEAD/GET).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "khub/http/hub_answers.h"
#include "khub/http/retry.h"
#include "khub/http/transport.h"
#include "khub/hub/hub_client.h"
#include "khub/xet/connection.h"

namespace khub::hub {

/// The client's transport: libcurl, every exchange counted (retries too) for request_count().
class CountingTransport final : public http::Transport {
 public:
  explicit CountingTransport(std::unique_ptr<http::Transport> inner) : inner_(std::move(inner)) {}
  Expected<http::Response> perform(const http::Request& request) override {
    ++count_;
    return inner_->perform(request);
  }
  [[nodiscard]] std::uint64_t count() const noexcept { return count_.load(); }

 private:
  std::unique_ptr<http::Transport> inner_;
  std::atomic<std::uint64_t> count_{0};
};

struct HubClient::Impl {
  ClientOptions options;
  std::unique_ptr<CountingTransport> transport;
  std::mutex memo_mutex;
  std::map<std::string, bool> trusted_orgs;
  std::mutex cas_token_mutex;  // held while a Xet token is asked for, so parallel downloads ask once
  std::map<std::string, xet::CasConnection> cas_tokens;  // Xet token route → its answer, while valid
  std::uint64_t instance_id = 0;

  explicit Impl(ClientOptions o);

  /// Request headers for `url`: Authorization only for Hub hosts (the transport adds User-Agent).
  [[nodiscard]] http::Headers headers_for(const std::string& url) const;
  [[nodiscard]] bool is_hub_host(const std::string& url) const;
  /// An API call or HEAD: its headers, the etag time-out as stall limit and 3 × it for the whole.
  [[nodiscard]] http::Request api_request(std::string method, const std::string& url) const;
  /// One exchange; OfflineMiss when offline.
  [[nodiscard]] Expected<http::Response> perform(const http::Request& request);
  /// perform() with the retry schedule (`retries` < 0: options.retry.max_retries).
  [[nodiscard]] Expected<http::Response> send(const http::Request& request, int retries = -1);
  /// Retries reach the progress sink's on_retry.
  [[nodiscard]] http::RetryNotice retry_notice() const;
  [[nodiscard]] Error offline_error(std::string_view what) const;
};

/// The error context of a call on `repo` (null: none).
[[nodiscard]] inline http::ErrorContext error_context(const RepoRef* repo, std::string_view revision = {},
                                                      std::string_view path = {}) {
  return http::ErrorContext{repo ? std::string_view(repo->id) : std::string_view(), revision, path};
}

}  // namespace khub::hub
