// The server against hostile or careless clients, over raw loopback sockets (issue 32, classes 2-4):
// bodies it does not want are never read (auth before body, unserved methods), the request head
// is bounded in size and time, slow and idle connections do not starve other clients, and a
// second server on one store refuses to start and touches nothing of the first.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "test_support.h"

namespace khub::localhub::testing {
namespace {

using Clock = std::chrono::steady_clock;

int connect_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `data`; false once the peer closed or `deadline` passed.
bool send_all(int fd, std::string_view data, Clock::time_point deadline = Clock::now() + std::chrono::seconds(5)) {
  while (!data.empty()) {
    pollfd p{fd, POLLOUT, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until the end of a response head (or close, or the time-out); the status code, or 0.
int read_status(int fd, std::chrono::milliseconds timeout) {
  std::string got;
  auto deadline = Clock::now() + timeout;
  while (got.find("\r\n\r\n") == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return 0;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  if (!got.starts_with("HTTP/1.1 ") || got.size() < 12) return 0;
  return std::stoi(got.substr(9, 3));
}

// Peak resident memory of this process (kB) since the last reset_peak_rss().
long peak_rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  long hwm = 0, rss = 0;
  while (std::getline(in, line)) {
    if (line.starts_with("VmHWM:")) hwm = std::stol(line.substr(6));
    if (line.starts_with("VmRSS:")) rss = std::stol(line.substr(6));
  }
  return std::max(hwm, rss);
}
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

ServerConfig with_tokens() {
  ServerConfig cfg;
  cfg.tokens.push_back(TokenGrant{"hf_writer", "alice", true, {}, {}});
  return cfg;
}

class Hardening : public ServerFixture {
 protected:
  ServerConfig config() override { return with_tokens(); }

  void SetUp() override {
    ServerFixture::SetUp();
    ASSERT_EQ(create_repo("kernel", "alice", "relu", "hf_writer")->status, 200);
  }
};

// A write endpoint answers 401/403/405 from the request head alone: the test announces a 1 GiB body
// and sends none of it, so a server that reads the body first never answers.
TEST_F(Hardening, UnauthenticatedWritesAreRefusedBeforeTheirBody) {
  struct Case {
    const char* method;
    const char* path;
    const char* auth;  // Authorization header value, or ""
    int status;
  };
  const Case cases[] = {
      {"POST", "/api/repos/create", "", 401},
      {"POST", "/api/repos/create", "Bearer hf_unknown", 401},
      {"DELETE", "/api/repos/delete", "", 401},
      {"PUT", "/api/kernels/alice/relu/settings", "", 401},
      {"POST", "/api/kernels/alice/relu/preupload/main", "", 401},
      {"POST", "/api/kernels/alice/relu/commit/main", "", 401},
      {"POST", "/api/kernels/alice/relu/branch/b1", "", 401},
      {"POST", "/api/kernels/alice/relu/tag/main", "Bearer hf_unknown", 401},
      {"POST", "/api/kernels/alice/relu/paths-info/main", "Bearer hf_unknown", 401},
      {"POST", "/kernels/alice/relu.git/info/lfs/objects/batch", "Bearer hf_unknown", 401},
      {"POST", "/kernels/alice/relu.git/info/lfs/objects/verify", "Bearer hf_unknown", 401},
      {"POST", "/api/validate-yaml", "Bearer hf_unknown", 401},
      // The Xet CAS takes only the access tokens xet-write-token mints; a Hub token is none.
      {"POST", "/v1/xorbs/default/0000000000000000000000000000000000000000000000000000000000000000", "", 401},
      {"POST", "/v1/shards", "Bearer hf_writer", 401},
      {"POST", "/v2/shards", "Bearer khubxet1.w.1.99999999999.00", 401},
      {"POST", "/v1/xorb-grants/default/00", "", 401},
      {"PATCH", "/api/kernels/alice/relu/settings", "Bearer hf_writer", 405},
      {"OPTIONS", "/api/kernels/alice/relu", "", 405},
      {"PRI", "/api/kernels/alice/relu", "", 405},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.method) + " " + c.path + " [" + c.auth + "]");
    int fd = connect_loopback(server_->port());
    ASSERT_GE(fd, 0);
    std::string head = std::string(c.method) + " " + c.path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                       "Content-Type: application/json\r\nContent-Length: 1073741824\r\n";
    if (*c.auth) head += std::string("Authorization: ") + c.auth + "\r\n";
    head += "\r\n{\"name\": \"";
    ASSERT_TRUE(send_all(fd, head));
    EXPECT_EQ(read_status(fd, std::chrono::milliseconds(2000)), c.status);
    ::close(fd);
  }
}

// With a valid Xet write token, a xorb, shard or telemetry body announced larger than its bound
// (65 MiB, 65 MiB, 1 MiB) is refused from the head alone.
TEST_F(Hardening, OversizedXetBodiesAreRefusedBeforeTheirBody) {
  auto r = client_->Get("/api/kernels/alice/relu/xet-write-token/main", {{"Authorization", "Bearer hf_writer"}});
  ASSERT_EQ(r->status, 200);
  const auto token = nlohmann::json::parse(r->body)["accessToken"].get<std::string>();
  const std::string zero(64, '0');
  for (const std::string& path : {"/v1/xorbs/default/" + zero, std::string("/v1/shards"), std::string("/v2/shards"),
                                 std::string("/v1/telemetry")}) {
    SCOPED_TRACE(path);
    int fd = connect_loopback(server_->port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(send_all(fd, "POST " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token +
                                 "\r\nContent-Length: 1073741824\r\n\r\nXETBLOB"));
    EXPECT_EQ(read_status(fd, std::chrono::milliseconds(2000)), 413);
    ::close(fd);
  }
}

// Header sets are bounded: 8 connections each streaming 32 MiB of header lines (and one line with
// no end) are cut off early, and the server's memory does not grow with what they send.
TEST_F(Hardening, OversizedHeaderSetsAreCutOffWithBoundedMemory) {
  constexpr int kConnections = 8;
  constexpr std::size_t kPerConnection = 32u << 20;
  reset_peak_rss();
  const long before = peak_rss_kb();
  std::vector<std::thread> senders;
  std::vector<std::size_t> sent(kConnections, 0);
  std::vector<int> statuses(kConnections, -1);
  const auto start = Clock::now();
  for (int i = 0; i < kConnections; ++i) {
    senders.emplace_back([&, i] {
      int fd = connect_loopback(server_->port());
      if (fd < 0) return;
      std::string line = i % 2 ? "X-Pad: " + std::string(8000, 'a') + "\r\n" : std::string(8192, 'b');  // odd: many lines; even: one endless line
      std::string chunk;
      while (chunk.size() < (1u << 20)) chunk += line;
      auto deadline = Clock::now() + std::chrono::seconds(8);
      if (send_all(fd, "GET /api/whoami-v2 HTTP/1.1\r\nHost: x\r\n" + std::string(i % 2 ? "" : "X-Long: "), deadline)) {
        while (sent[i] < kPerConnection && send_all(fd, chunk, deadline)) sent[i] += chunk.size();
      }
      statuses[i] = read_status(fd, std::chrono::milliseconds(1000));
      ::close(fd);
    });
  }
  for (auto& t : senders) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const long grown_mb = (peak_rss_kb() - before) / 1024;
  std::size_t total = 0;
  for (auto s : sent) total += s;
  std::cout << "[ numbers  ] oversized headers: " << kConnections << " connections offered "
            << (kConnections * kPerConnection >> 20) << " MiB, server took " << (total >> 20) << " MiB in "
            << seconds << " s; peak RSS grew " << grown_mb << " MiB\n";
  for (int i = 0; i < kConnections; ++i) {
    EXPECT_LT(sent[i], kPerConnection) << "connection " << i << " could send its whole header set";
    EXPECT_TRUE(statuses[i] == 431 || statuses[i] == 0) << statuses[i];
  }
  EXPECT_LT(grown_mb, 64);
  // The server still answers.
  EXPECT_EQ(client_->Get("/api/kernels/alice/relu")->status, 200);
}

// Large JSON bodies from callers with a bad token are never read, and readable ones are bounded:
// 8 concurrent 64 MiB bodies leave the server's peak memory nearly where it was.
TEST_F(Hardening, LargeBodiesCostBoundedMemory) {
  constexpr int kConnections = 8;
  constexpr std::size_t kBody = 64u << 20;
  reset_peak_rss();
  const long before = peak_rss_kb();
  std::vector<std::thread> senders;
  std::vector<std::size_t> sent(kConnections, 0);
  std::vector<int> statuses(kConnections, 0);
  for (int i = 0; i < kConnections; ++i) {
    senders.emplace_back([&, i] {
      int fd = connect_loopback(server_->port());
      if (fd < 0) return;
      // Even: a bad token on a write; odd: an anonymous (allowed) read with an oversized body.
      std::string path = i % 2 ? "/api/kernels/alice/relu/paths-info/main" : "/api/kernels/alice/relu/preupload/main";
      std::string head = "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
                         (i % 2 ? std::string() : std::string("Authorization: Bearer hf_bad\r\n")) +
                         "Content-Length: " + std::to_string(kBody) + "\r\n\r\n{\"paths\": [";
      std::string chunk;
      while (chunk.size() < (1u << 20)) chunk += "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",";
      auto deadline = Clock::now() + std::chrono::seconds(8);
      if (send_all(fd, head, deadline)) {
        while (sent[i] + chunk.size() < kBody && send_all(fd, chunk, deadline)) sent[i] += chunk.size();
      }
      statuses[i] = read_status(fd, std::chrono::milliseconds(1000));
      ::close(fd);
    });
  }
  for (auto& t : senders) t.join();
  const long grown_mb = (peak_rss_kb() - before) / 1024;
  std::cout << "[ numbers  ] large bodies: " << kConnections << " x " << (kBody >> 20)
            << " MiB offered; peak RSS grew " << grown_mb << " MiB\n";
  for (int i = 0; i < kConnections; ++i) {
    EXPECT_LT(sent[i] + (1u << 20), kBody) << "connection " << i << " could send its whole body";
    EXPECT_TRUE(statuses[i] == (i % 2 ? 413 : 401) || statuses[i] == 0) << i << ": " << statuses[i];
  }
  EXPECT_LT(grown_mb, 64);
}

// Chunked bodies: well-framed ones are served; a chunk-size line with no end (which cpp-httplib's
// line reader would buffer whole) is cut off after a few KiB.
TEST_F(Hardening, ChunkedBodiesAreFramedWithBoundedLines) {
  int fd = connect_loopback(server_->port());
  ASSERT_GE(fd, 0);
  std::string body = R"({"paths": [".gitattributes"]})";
  char size[16];
  std::snprintf(size, sizeof size, "%zx", body.size());
  ASSERT_TRUE(send_all(fd, "POST /api/kernels/alice/relu/paths-info/main HTTP/1.1\r\nHost: x\r\n"
                           "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                               std::string(size) + "\r\n" + body + "\r\n0\r\n\r\n"));
  EXPECT_EQ(read_status(fd, std::chrono::milliseconds(2000)), 200);
  ::close(fd);

  fd = connect_loopback(server_->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "POST /api/kernels/alice/relu/paths-info/main HTTP/1.1\r\nHost: x\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n"));
  const std::string endless(1u << 20, '1');
  std::size_t sent = 0;
  auto deadline = Clock::now() + std::chrono::seconds(5);
  while (sent < (64u << 20) && send_all(fd, endless, deadline)) sent += endless.size();
  EXPECT_LT(sent, 64u << 20) << "the server read a 64 MiB chunk-size line";
  ::close(fd);
  EXPECT_EQ(client_->Get("/api/kernels/alice/relu")->status, 200);
}

// 200 idle connections and 200 that send their headers a byte at a time do not keep the server
// from answering a normal client within a second.
TEST(HardeningStarvation, SlowAndIdleConnectionsDoNotStarveOthers) {
  TempDir dir("starve");
  ServerOptions o;
  o.root = dir.path / "store";
  Server server(std::move(o));  // default limits
  ASSERT_TRUE(server.start());
  constexpr int kIdle = 200, kSlow = 200;
  const auto t_open = Clock::now();
  std::vector<int> idle, slow;
  for (int i = 0; i < kIdle; ++i) idle.push_back(connect_loopback(server.port()));
  for (int i = 0; i < kSlow; ++i) {
    slow.push_back(connect_loopback(server.port()));
    send_all(slow.back(), "GET /api/whoami-v2 HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  }
  ASSERT_EQ(std::count(idle.begin(), idle.end(), -1) + std::count(slow.begin(), slow.end(), -1), 0);
  const double open_s = std::chrono::duration<double>(Clock::now() - t_open).count();
  std::atomic<bool> done{false};
  std::thread drip([&] {  // one more header byte per slow connection every 250 ms
    while (!done) {
      for (int fd : slow) (void)::send(fd, "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let the server take them all
  std::vector<double> ms;
  for (int i = 0; i < 20; ++i) {
    httplib::Client c("127.0.0.1", server.port());
    c.set_connection_timeout(3, 0);
    c.set_read_timeout(3, 0);
    auto t0 = Clock::now();
    auto r = c.Get("/api/kernels/acme/missing");
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!r || r->status != 404) {
      ADD_FAILURE() << "request " << i << " got no answer within 3 s";
      break;
    }
  }
  done = true;
  drip.join();
  for (int fd : idle) ::close(fd);
  for (int fd : slow) ::close(fd);
  const auto t_stop = Clock::now();
  server.stop();
  const double stop_s = std::chrono::duration<double>(Clock::now() - t_stop).count();
  std::sort(ms.begin(), ms.end());
  std::cout << "[ numbers  ] " << kIdle << " idle + " << kSlow << " slow-header connections: " << ms.size()
            << " requests, median " << ms[ms.size() / 2] << " ms, max " << ms.back() << " ms (opening them took "
            << open_s << " s, stopping the server " << stop_s << " s)\n";
  EXPECT_LT(ms.back(), 1000.0);
}

// A second server on the same --root refuses to start, and its start-up clean-up never runs: the
// first server's in-flight temp file and multipart parts stay.
TEST(HardeningRoot, SecondServerOnOneRootRefusesAndTouchesNothing) {
  TempDir dir("tworoots");
  ServerOptions a;
  a.root = dir.path / "store";
  Server first(a);
  ASSERT_TRUE(first.start());
  auto tmp = dir.path / "store" / "tmp" / "inflight.tmp";
  auto part = dir.path / "store" / "uploads" / (std::string(64, 'a') + ".1") / "1.part";
  std::filesystem::create_directories(tmp.parent_path());
  std::filesystem::create_directories(part.parent_path());
  std::ofstream(tmp) << "half a blob";
  std::ofstream(part) << "part one";

  Server second(a);
  auto st = second.start();
  ASSERT_FALSE(st) << "a second server started on the same root";
  EXPECT_NE(st.error().message.find("another khub serve"), std::string::npos) << st.error().message;
  EXPECT_EQ(st.error().message.find('\n'), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(tmp));
  EXPECT_TRUE(std::filesystem::exists(part));
  httplib::Client c("127.0.0.1", first.port());
  EXPECT_EQ(c.Get("/api/kernels/acme/missing")->status, 404);

  first.stop();  // the lock goes with the server
  Server third(a);
  EXPECT_TRUE(third.start());
}

}  // namespace
}  // namespace khub::localhub::testing
