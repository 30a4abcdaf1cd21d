// The transport against a hostile server on loopback: whatever a server sends, a call ends within
// its size and time budget with a clear error, and memory stays bounded.
#include "khub/http/transport.h"

#include <gtest/gtest.h>

#include "hostile_server.h"
#include "khub/http/hub_answers.h"
#include "khub/http/retry.h"

namespace khub::http {
namespace {

using namespace std::chrono_literals;
using test::HostileServer;

Request get(const std::string& url, std::chrono::milliseconds timeout = 1000ms) {
  Request r;
  r.url = url;
  r.timeout = timeout;
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(Transport, AnEndlessApiAnswerIsCutAtItsSizeLimit) {
  HostileServer server([](HostileServer& s, int fd, const std::string&) {
    s.send(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[");
    s.endless(fd, std::string(64 * 1024, ' '));
  });
  auto transport = make_curl_transport();
  Request r = get(server.url("/api/models/a/b/tree/main"));
  r.max_body = 1 << 20;
  auto res = transport->perform(r);
  ASSERT_FALSE(res) << "an endless body must not be collected";
  EXPECT_EQ(res.error().code, ErrorCode::Protocol) << res.error().message;
}

TEST(Transport, ADrippingErrorBodyEndsWithinItsTimeBudget) {
  // 500 with a 100-byte body sent one byte every 150 ms (15 s in all): no stall, yet far too slow.
  HostileServer server([](HostileServer& s, int fd, const std::string&) {
    s.send(fd, "HTTP/1.1 500 Oops\r\nContent-Length: 100\r\n\r\n");
    s.drip(fd, std::string(100, 'x'), 150ms);
  });
  auto transport = make_curl_transport();
  const auto start = std::chrono::steady_clock::now();
  auto res = transport->perform(get(server.url(), 1000ms));
  EXPECT_LT(seconds_since(start), 6.0) << "the client waited for the whole drip";
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::Network) << res.error().message;
}

TEST(Transport, AnEndlessRedirectBodyIsNotReadToItsEnd) {
  HostileServer server([](HostileServer& s, int fd, const std::string&) {
    s.send(fd, "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nConnection: close\r\n\r\n");
    s.endless(fd, std::string(64 * 1024, 'r'));
  });
  auto transport = make_curl_transport();
  Request r = get(server.url());
  r.max_body = 256 * 1024;
  const auto start = std::chrono::steady_clock::now();
  auto res = transport->perform(r);
  ASSERT_TRUE(res) << res.error().describe();
  EXPECT_EQ(res->status, 302);
  EXPECT_EQ(res->header("location"), "/elsewhere");
  EXPECT_EQ(res->body.size(), 256u * 1024u);
  EXPECT_LT(seconds_since(start), 2.0);
}

TEST(Transport, ASilentServerTimesOut) {
  HostileServer server([](HostileServer& s, int, const std::string&) {
    while (!s.stopping()) std::this_thread::sleep_for(20ms);
  });
  auto transport = make_curl_transport();
  const auto start = std::chrono::steady_clock::now();
  auto res = transport->perform(get(server.url(), 500ms));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::Network);
  EXPECT_LT(seconds_since(start), 4.0);
}

// A file body that stops after its first bytes is cut about `timeout` after the last byte, not 5-6 s
// later as curl's averaged low-speed check did (docs/security.md "Known limit", now gone).
TEST(Transport, AStalledBodyEndsAboutItsTimeoutAfterTheLastByte) {
  HostileServer server([](HostileServer& s, int fd, const std::string&) {
    s.send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + std::string(1000, 'x'));
    while (!s.stopping()) std::this_thread::sleep_for(20ms);
  });
  auto transport = make_curl_transport();
  Request r = get(server.url(), 500ms);
  std::size_t got = 0;
  r.on_body = [&](std::string_view part) {
    got += part.size();
    return true;
  };
  const auto start = std::chrono::steady_clock::now();
  auto res = transport->perform(r);
  const double took = seconds_since(start);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::Network);
  EXPECT_NE(res.error().message.find("stalled"), std::string::npos) << res.error().message;
  EXPECT_EQ(got, 1000u);
  EXPECT_LT(took, 2.5) << "cut " << took << " s after the request, with a 0.5 s timeout";
}

TEST(Transport, RetriesStopAtThePolicysCount) {
  std::atomic<int> calls{0};
  HostileServer server([&calls](HostileServer& s, int fd, const std::string&) {
    ++calls;
    s.send(fd, "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n");
  });
  auto transport = make_curl_transport();
  RetryPolicy policy{.max_retries = 2, .base = 1ms, .max_wait = 5ms};
  int notices = 0;
  auto res = send_with_retries(*transport, get(server.url()), policy,
                               [&](std::string_view, int, int, std::chrono::milliseconds) { ++notices; });
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(notices, 2);
}

TEST(Transport, OnlyHttpIsSpoken) {
  auto transport = make_curl_transport();
  auto res = transport->perform(get("file:///etc/passwd"));
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().code, ErrorCode::Network);
}

}  // namespace
}  // namespace khub::http
