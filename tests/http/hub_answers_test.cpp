// The Hub's answers as the one wire layer reads them, for the client, the publisher and Xet alike:
// where a token may go, pagination, error mapping and retry waits.
#include "khub/http/hub_answers.h"

#include <gtest/gtest.h>

#include "khub/http/retry.h"

namespace khub::http {
namespace {

Response answer(long status, std::map<std::string, std::string> headers = {}, std::string body = {}) {
  Response r;
  r.status = status;
  r.headers = std::move(headers);
  r.body = std::move(body);
  return r;
}

TEST(HubAnswers, TheTokenGoesOnlyToHubHostsOverTheEndpointsScheme) {
  const std::string hub = "https://hub.example";
  const std::vector<std::string> extra = {"cdn.example"};
  EXPECT_TRUE(is_hub_host("https://hub.example/api/models/a/b", hub, extra));
  EXPECT_TRUE(is_hub_host("https://cdn.example/blob", hub, extra));
  EXPECT_FALSE(is_hub_host("http://cdn.example/blob", hub, extra)) << "an https hub's token must not go out over http";
  EXPECT_FALSE(is_hub_host("http://hub.example/api/models/a/b", hub, extra));
  EXPECT_FALSE(is_hub_host("https://evilcdn.example/blob", hub, extra));  // an extra host matches whole
  EXPECT_FALSE(is_hub_host("https://evil.example/?next=https://hub.example/", hub, extra));
  EXPECT_FALSE(is_hub_host("/relative/path", hub, extra));
  EXPECT_TRUE(is_hub_host("HTTPS://HUB.example/x", hub));
}

TEST(HubAnswers, NextLinkFindsRelNextAmongOthers) {
  EXPECT_EQ(next_link(R"(<https://h/a?cursor=2>; rel="next")"), "https://h/a?cursor=2");
  EXPECT_EQ(next_link(R"(<https://h/p>; rel="prev", </a?c=3>; rel=next)"), "/a?c=3");
  EXPECT_EQ(next_link(R"(<https://h/p>; rel="prev")"), "");
  EXPECT_EQ(next_link("<unterminated; rel=\"next\""), "");
  EXPECT_EQ(next_link(""), "");
  EXPECT_EQ(next_link(R"(<https://h/p>; rel=nextpage)"), "") << "a longer rel is another rel";
}

// A Xet file's HEAD carries two links; the token route is the xet-auth one.
TEST(HubAnswers, LinkWithRelPicksTheXetTokenRoute) {
  const std::string link =
      R"(<https://hub/api/models/a/b/xet-read-token/c0ffee>; rel="xet-auth", )"
      R"(<https://cas/v1/reconstructions/f00d>; rel="xet-reconstruction-info")";
  EXPECT_EQ(link_with_rel(link, "xet-auth"), "https://hub/api/models/a/b/xet-read-token/c0ffee");
  EXPECT_EQ(link_with_rel(link, "xet-reconstruction-info"), "https://cas/v1/reconstructions/f00d");
  EXPECT_EQ(link_with_rel(link, "xet"), "");
}

TEST(HubAnswers, PaginationStopsOnARepeatedPage) {
  Pages pages("https://h/api/x/tree/main");
  auto more = pages.advance(answer(200, {{"link", R"(</api/x/tree/main?cursor=1>; rel="next")"}}));
  ASSERT_TRUE(more);
  EXPECT_TRUE(*more);
  EXPECT_EQ(pages.url(), "https://h/api/x/tree/main?cursor=1");
  auto loop = pages.advance(answer(200, {{"link", R"(</api/x/tree/main>; rel="next")"}}));
  ASSERT_FALSE(loop) << "a listing that links back to a page already read must end";
  EXPECT_EQ(loop.error().code, ErrorCode::Protocol);
  Pages last("https://h/a");
  auto end = last.advance(answer(200));
  ASSERT_TRUE(end);
  EXPECT_FALSE(*end);
}

TEST(HubAnswers, PaginationStopsAfterItsPageBound) {
  Pages pages("https://h/a?p=0", 3);
  for (int i = 1; i < 3; ++i) ASSERT_TRUE(pages.advance(answer(200, {{"link", "</a?p=" + std::to_string(i) + ">; rel=next"}})));
  auto over = pages.advance(answer(200, {{"link", "</a?p=9>; rel=next"}}));
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::Protocol);
}

TEST(HubAnswers, PaginationStopsAfterItsEntryBound) {
  Pages pages("https://h/a", 100, 2500);
  EXPECT_TRUE(pages.add_entries(1000));
  EXPECT_TRUE(pages.add_entries(1000));
  auto over = pages.add_entries(1000);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::Protocol);
}

TEST(HubAnswers, ErrorsFollowTheHubsCodesThenTheStatus) {
  const ErrorContext ctx{"org/k", "v1", "build/x.so"};
  const std::string url = "https://h/api/kernels/org/k/tree/v1";
  EXPECT_EQ(hub_error("GET", url, answer(404, {{"x-error-code", "RevisionNotFound"}}), ctx).code, ErrorCode::RevisionNotFound);
  EXPECT_EQ(hub_error("GET", url, answer(404, {{"x-error-code", "EntryNotFound"}}), ctx).code, ErrorCode::EntryNotFound);
  EXPECT_EQ(hub_error("GET", url, answer(403, {{"x-error-code", "GatedRepo"}}), ctx).code, ErrorCode::GatedRepo);
  EXPECT_EQ(hub_error("GET", url, answer(404, {{"x-error-code", "RepoNotFound"}}), ctx).code, ErrorCode::RepoNotFound);
  EXPECT_EQ(hub_error("GET", url, answer(401), ctx).code, ErrorCode::RepoNotFound);  // a repo URL: hidden repo
  EXPECT_EQ(hub_error("GET", "https://h/other", answer(401), ctx).code, ErrorCode::Unauthorized);
  EXPECT_EQ(hub_error("GET", url, answer(401, {{"x-error-message", "Invalid credentials in Authorization header"}}), ctx).code,
            ErrorCode::Unauthorized);
  EXPECT_EQ(hub_error("GET", url, answer(403, {{"x-error-message", "Access to this resource is disabled."}}), ctx).code,
            ErrorCode::Forbidden);
  EXPECT_EQ(hub_error("POST", url, answer(409), ctx).code, ErrorCode::Conflict);
  EXPECT_EQ(hub_error("POST", url, answer(412), ctx).code, ErrorCode::Conflict);
  EXPECT_EQ(hub_error("GET", url, answer(429), ctx).code, ErrorCode::RateLimited);
  EXPECT_EQ(hub_error("GET", url, answer(503), ctx).code, ErrorCode::Network);
  EXPECT_EQ(hub_error("GET", url, answer(418), ctx).code, ErrorCode::Protocol);
}

TEST(HubAnswers, ErrorsNameTheObjectAndRedactTheServersText) {
  const ErrorContext ctx{"org/k", "v1", "build/x.so"};
  auto e = hub_error("GET", "https://h/org/k/resolve/v1/build/x.so?X-Amz-Signature=abc",
                     answer(404, {{"x-error-code", "EntryNotFound"}, {"x-request-id", "r-1"}},
                            R"({"error":"not here hf_abcdefghijklmnopqrstuvwxyz0123"})"),
                     ctx);
  EXPECT_NE(e.message.find("build/x.so not found in org/k at v1"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("request id r-1"), std::string::npos) << e.message;
  EXPECT_EQ(e.message.find("abc"), std::string::npos) << "signed query values are redacted: " << e.message;
  EXPECT_EQ(e.describe().find("hf_abcdefghij"), std::string::npos) << "tokens in server text are redacted";
  auto write = hub_error("POST", "https://h/api/repos/create", answer(403), ErrorContext{"org/k", {}, {}, true});
  EXPECT_NE(write.hint.find("write"), std::string::npos) << write.hint;
}

TEST(HubAnswers, ServerMessageReadsHeaderThenJsonThenText) {
  EXPECT_EQ(server_message(answer(400, {{"x-error-message", "bad"}}, R"({"error":"other"})")), "bad");
  EXPECT_EQ(server_message(answer(400, {}, R"({"error":["a","b"],"error_description":"c"})")), "a; b: c");
  EXPECT_EQ(server_message(answer(400, {}, R"({"errors":[{"message":"m1"},{"message":"m2"}]})")), "m1; m2");
  EXPECT_EQ(server_message(answer(400, {}, "plain\ntext")), "plain text");
}

TEST(HubAnswers, ServerTextReachesTheTerminalWithoutControlBytes) {
  const auto e = hub_error("GET", "https://h/api/x",
                           answer(403, {{"x-error-message", "no\x1b[2J\x1b]0;owned\x07\nline"}}, ""));
  for (unsigned char c : e.describe()) {
    if (c != '\n') {
      EXPECT_FALSE(c < 0x20 || c == 0x7f) << "control byte " << int(c) << " in: " << e.describe();
    }
  }
  const auto json = server_message(answer(400, {}, "{\"error\":\"a\\u001b[31mb\"}"));
  EXPECT_EQ(json.find('\x1b'), std::string::npos) << json;
}

TEST(HubAnswers, ADeeplyNestedErrorBodyIsReadAsText) {
  const std::string deep = R"({"error":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  const std::string msg = server_message(answer(500, {}, deep));
  EXPECT_LE(msg.size(), 400u) << "one bounded line, not the document";
  EXPECT_EQ(hub_error("GET", "https://h/api/x", answer(500, {}, deep)).code, ErrorCode::Network);
}

TEST(Retry, ServerWaitsOn429AreHonouredAndCapped) {
  RetryPolicy p;
  p.max_wait = std::chrono::milliseconds(120000);
  const Response limited = answer(429, {{"ratelimit", "\"api\";r=0;t=55"}});
  EXPECT_EQ(retry_wait(p, 0, &limited).count(), 56000);
  const Response retry_after = answer(429, {{"retry-after", "7"}});
  EXPECT_EQ(retry_wait(p, 0, &retry_after).count(), 8000);
  p.max_wait = std::chrono::milliseconds(20);
  EXPECT_EQ(retry_wait(p, 0, &retry_after).count(), 20);
  p.base = std::chrono::milliseconds(100);
  p.max_wait = std::chrono::milliseconds(100000);
  for (int attempt = 0; attempt < 7; ++attempt) {
    const long long step = 100LL * (attempt < 3 ? 1 << attempt : 8);
    const auto w = retry_wait(p, attempt, nullptr).count();
    EXPECT_GE(w, step * 3 / 4) << attempt;
    EXPECT_LE(w, step * 5 / 4) << attempt;
  }
  EXPECT_EQ(retry_line("GET https://h/x: HTTP 503", 2, 5, std::chrono::milliseconds(4050)),
            "GET https://h/x: HTTP 503; retry 2 of 5 in 4.0 s");
  EXPECT_TRUE(is_retryable_status(503));
  EXPECT_FALSE(is_retryable_status(501));
}

}  // namespace
}  // namespace khub::http
