// HTTP header values and error bodies of Hub answers, as khub::http reads them: Link
// (next_link, Pages::advance), RateLimit / Retry-After (retry_wait), X-Error-Code / X-Error-Message,
// Content-Range and JSON error bodies (hub_error, server_message), and token host checks on
// Location-like URLs (is_hub_host).
//
// Input: the first line is the status ("429"); then "name: value" lines; an empty line; the body.
#include <chrono>
#include <string>

#include "fuzz_util.h"
#include "khub/base/text.h"
#include "khub/http/hub_answers.h"
#include "khub/http/retry.h"


extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace khub::http;
  auto in = khub_fuzz::text(data, size);
  Response res;
  res.url = "https://huggingface.co/api/models/org/repo/tree/main?expand=false";
  res.status = khub_fuzz::take_status(in);
  khub_fuzz::take_headers(in, [&res](std::string_view name, std::string_view value) {
    res.headers[khub::ascii_lower(name)] = std::string(value);
  });
  res.body = std::string(in);

  for (const auto& [name, value] : res.headers) {
    (void)next_link(value);
    (void)is_hub_host(value, "https://huggingface.co", {"cdn-lfs.hf.co", "localhost:8080"});
    (void)is_hub_host(value, "http://127.0.0.1:8080");
  }
  RetryPolicy policy;
  for (int attempt = -1; attempt <= 5; ++attempt) {
    auto wait = retry_wait(policy, attempt, &res);
    if (wait > policy.max_wait || wait.count() < 0) khub_fuzz::invariant_failed("retry_wait outside [0, max_wait]");
  }
  (void)is_retryable_status(res.status);
  if (!res.ok()) {
    (void)hub_error("GET", res.url, res, ErrorContext{"org/repo", "main", "build/x/metadata.json"});
    (void)hub_error("POST", res.url, res, ErrorContext{.write = true});
  }
  (void)server_message(res);
  Pages pages(res.url, 3);
  for (int i = 0; i < 4; ++i) {
    auto more = pages.advance(res);
    if (!more || !*more) break;
    res.url = pages.url();
  }
  return 0;
}
