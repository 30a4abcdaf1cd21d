#pragma once
// Retries of transient failures, as huggingface_hub schedules them: connect errors and 408, 429,
// 500, 502, 503, 504 are retried after 1, 2, 4, 8, 8 × base (±25 % jitter); a 429 waits what the
// server asks (`RateLimit: "api";r=0;t=N` or `Retry-After: N`, plus one second). Every wait is
// capped by max_wait.
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "khub/base/error.h"
#include "khub/http/message.h"
#include "khub/http/transport.h"

namespace khub::http {

struct RetryPolicy {
  int max_retries = 5;
  std::chrono::milliseconds base{1000};
  std::chrono::milliseconds max_wait{120000};
};

/// Told before each wait: the request and its failure in one redacted line, the attempt (from 1)
/// out of `of`, and the wait.
using RetryNotice = std::function<void(std::string_view what, int attempt, int of, std::chrono::milliseconds wait)>;

/// The one line a retry notice prints: "<what>; retry 2 of 5 in 4.1 s".
[[nodiscard]] std::string retry_line(std::string_view what, int attempt, int of, std::chrono::milliseconds wait);

/// Whether a status is worth another try: 408, 429, 500, 502, 503, 504. (501 is not: a web server
/// that is no Hub answers it to a POST.)
[[nodiscard]] bool is_retryable_status(long status) noexcept;

/// How long to wait before retry `attempt` (0-based) after `response` (null: a transport failure).
[[nodiscard]] std::chrono::milliseconds retry_wait(const RetryPolicy& policy, int attempt, const Response* response);

/// Performs `request`, retrying transport failures and retryable statuses up to policy.max_retries
/// times. Returns the last response (possibly a retryable status) or the last transport error.
[[nodiscard]] Expected<Response> send_with_retries(Transport& transport, const Request& request,
                                                   const RetryPolicy& policy, const RetryNotice& notice = {});

/// Waits as send_with_retries does between tries (notice first), for callers with their own loop.
void pause_before_retry(const RetryNotice& notice, std::string_view what, int attempt, int of,
                        std::chrono::milliseconds wait);

}  // namespace khub::http
