#include "khub/http/retry.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>
#include <thread>

#include "khub/base/redact.h"

namespace khub::http {
namespace {

// Seconds the server asks for on a 429: `RateLimit: "api";r=0;t=N`, else `Retry-After: N`.
std::optional<long long> server_wait_seconds(const Response& r) {
  const std::string rl = r.header("ratelimit");
  const auto rem = rl.find("r="), t = rl.find("t=");
  if (rem != std::string::npos && t != std::string::npos && std::atoll(rl.c_str() + rem + 2) == 0 &&
      std::isdigit(static_cast<unsigned char>(rl.c_str()[t + 2])))
    return std::atoll(rl.c_str() + t + 2);
  const std::string ra = r.header("retry-after");
  if (!ra.empty() && ra.size() < 12 && std::all_of(ra.begin(), ra.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::atoll(ra.c_str());
  return std::nullopt;
}

}  // namespace

std::string retry_line(std::string_view what, int attempt, int of, std::chrono::milliseconds wait) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f", static_cast<double>(wait.count()) / 1000.0);
  return std::string(what) + "; retry " + std::to_string(attempt) + " of " + std::to_string(of) + " in " + secs + " s";
}

bool is_retryable_status(long status) noexcept {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

std::chrono::milliseconds retry_wait(const RetryPolicy& policy, int attempt, const Response* response) {
  using std::chrono::milliseconds;
  if (response && response->status == 429) {
    if (auto s = server_wait_seconds(*response)) return std::min(milliseconds((*s + 1) * 1000), policy.max_wait);
  }
  static constexpr int kSteps[] = {1, 2, 4, 8, 8};
  thread_local std::mt19937 rng{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(0.75, 1.25);
  const auto base = static_cast<double>((policy.base * kSteps[std::clamp(attempt, 0, 4)]).count());
  return std::min(milliseconds(static_cast<long long>(base * jitter(rng))), policy.max_wait);
}

void pause_before_retry(const RetryNotice& notice, std::string_view what, int attempt, int of,
                        std::chrono::milliseconds wait) {
  if (notice) notice(what, attempt + 1, of, wait);
  std::this_thread::sleep_for(wait);
}

Expected<Response> send_with_retries(Transport& transport, const Request& request, const RetryPolicy& policy,
                                     const RetryNotice& notice) {
  for (int attempt = 0;; ++attempt) {
    auto res = transport.perform(request);
    const bool last = attempt >= policy.max_retries;
    if (!res) {
      if (res.error().code != ErrorCode::Network || last) return res;
      pause_before_retry(notice, res.error().message, attempt, policy.max_retries, retry_wait(policy, attempt, nullptr));
      continue;
    }
    if (!is_retryable_status(res->status) || last) return res;
    pause_before_retry(notice, request.method + " " + redact(request.url) + ": HTTP " + std::to_string(res->status),
                       attempt, policy.max_retries, retry_wait(policy, attempt, &res.value()));
  }
}

}  // namespace khub::http
