#include "connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace khub::localhub {

namespace {
using Clock = std::chrono::steady_clock;

thread_local bool t_refuse = false;  // set while the pool runs a connection it has no room for

// Worker threads made on demand, one per connection being served; up to `keep` stay for reuse.
// The state is shared with the (detached) workers, so it outlives the queue object.
class ElasticPool : public httplib::TaskQueue {
 public:
  ElasticPool(std::size_t keep, std::size_t max) : s_(std::make_shared<State>()) {
    s_->keep = keep;
    s_->max = max;
  }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock lock(s_->m);
    if (s_->busy >= s_->max || s_->shutdown) {
      lock.unlock();
      t_refuse = true;  // runs here, on the accepting thread: a 503 and a close, without blocking
      fn();
      t_refuse = false;
      return;
    }
    ++s_->busy;
    s_->jobs.push_back(std::move(fn));
    if (s_->jobs.size() > s_->idle) {
      ++s_->threads;
      std::thread([s = s_] { work(s); }).detach();
    } else {
      s_->cv.notify_one();
    }
  }

  void shutdown() override {
    std::unique_lock lock(s_->m);
    s_->shutdown = true;
    s_->cv.notify_all();
    s_->done.wait(lock, [&] { return s_->threads == 0; });
  }

 private:
  struct State {
    std::mutex m;
    std::condition_variable cv, done;
    std::deque<std::function<void()>> jobs;
    std::size_t keep = 0, max = 0, busy = 0, idle = 0, threads = 0;
    bool shutdown = false;
  };

  static void work(const std::shared_ptr<State>& s) {
    std::unique_lock lock(s->m);
    for (;;) {
      ++s->idle;
      s->cv.wait_for(lock, std::chrono::seconds(30), [&] { return !s->jobs.empty() || s->shutdown; });
      --s->idle;
      if (s->jobs.empty()) {
        if (s->shutdown || s->threads > s->keep) break;
        continue;
      }
      auto fn = std::move(s->jobs.front());
      s->jobs.pop_front();
      lock.unlock();
      fn();
      fn = nullptr;
      lock.lock();
      --s->busy;
      if (s->threads > s->keep && s->jobs.empty()) break;
    }
    --s->threads;
    s->done.notify_all();
  }

  std::shared_ptr<State> s_;
};

// Writes a complete error response straight to the socket (the parser is bypassed or broken).
std::string raw_error(int status, const char* reason, const char* code, const char* message) {
  std::string body = std::string("{\"error\":\"") + message + "\"}";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
                    "\r\nContent-Type: application/json\r\nConnection: close\r\nX-Error-Code: " + code +
                    "\r\nX-Error-Message: " + message + "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\n\r\n" + body;
}

void send_raw_error(int fd, int status, const char* reason, const char* code, const char* message, int timeout_ms) {
  std::string out = raw_error(status, reason, code, message);
  std::string_view rest = out;
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!rest.empty()) {
    pollfd p{fd, POLLOUT, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return;
    ssize_t n = ::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

void close_socket(int fd) {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

bool address_of(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
  char host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
    return false;
  ip = host;
  port = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(addr).sin6_port
                                          : reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  return true;
}

// One connection: buffered reads with the head's size and time bounds, timed writes.
class Connection : public httplib::Stream {
 public:
  Connection(int fd, const ConnectionLimits& limits, const std::atomic<socket_t>& server_socket)
      : fd_(fd), limits_(limits), server_socket_(server_socket) {}
  ~Connection() override {
    if (ssl_) {
      if (!dead_) SSL_shutdown(ssl_);  // close_notify, best effort (non-blocking)
      SSL_free(ssl_);
    }
  }

  // TLS: the handshake on a non-blocking socket, within the head time-out. False on failure.
  bool accept_tls(SSL_CTX* ctx) {
    ssl_ = SSL_new(ctx);
    if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) return false;
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    const auto deadline = Clock::now() + limits_.head_timeout;
    for (;;) {
      ERR_clear_error();
      int r = SSL_accept(ssl_);
      if (r == 1) return true;
      if (!wait_tls(SSL_get_error(ssl_, r), deadline)) {
        dead_ = true;
        return false;
      }
    }
  }

  // Waits for the first byte of the next request; false after the idle time-out, on close, or
  // when the server stops.
  bool wait_for_request() {
    if (pos_ < len_ || (ssl_ && SSL_pending(ssl_) > 0)) return true;
    const auto deadline = Clock::now() + limits_.idle_timeout;
    while (server_socket_ != INVALID_SOCKET) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 200)));
      if (r < 0 && errno != EINTR) return false;
      if (r > 0) return (p.revents & POLLIN) != 0;
    }
    return false;
  }

  void begin_request() {
    in_head_ = true;
    head_bytes_ = 0;
    head_deadline_ = Clock::now() + limits_.head_timeout;
    body_read_ = 0;
    body_length_ = 0;
    body_chunked_ = false;
    close_ = false;
    chunk_left_ = chunk_size_ = 0;
    chunk_line_ = trailer_bytes_ = 0;
    chunk_hex_ = true;
    chunk_after_data_ = chunk_trailer_ = false;
  }

  // Called by cpp-httplib once the head has parsed, before routing.
  void end_head(const httplib::Request& req) {
    in_head_ = false;
    body_chunked_ = req.has_header("Transfer-Encoding");
    auto cl = req.get_header_value("Content-Length");
    body_length_ = cl.empty() ? 0 : std::strtoull(cl.c_str(), nullptr, 10);
    head_done_ = true;
  }

  // After a response: may the connection serve another request?
  bool reusable() const {
    return head_done_ && !dead_ && !close_ && !body_chunked_ && body_read_ >= body_length_;
  }

  bool head_done_ = false;
  bool close_ = false;
  bool tls() const { return ssl_ != nullptr; }

  bool is_readable() const override {
    if (pos_ < len_ || (ssl_ && SSL_pending(ssl_) > 0)) return true;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(limits_.io_timeout.count())) > 0;
  }

  bool is_writable() const override {
    pollfd p{fd_, POLLOUT, 0};
    return !dead_ && ::poll(&p, 1, static_cast<int>(limits_.io_timeout.count())) > 0;
  }

  ssize_t read(char* ptr, size_t size) override {
    if (dead_) return -1;
    if (pos_ == len_ && !fill()) return -1;
    std::size_t n = std::min(size, len_ - pos_);
    if (in_head_) {
      head_bytes_ += n;
      if (head_bytes_ > limits_.max_head_bytes) {
        refuse(431, "Request Header Fields Too Large", "RequestHeaderFieldsTooLarge",
               "request line and headers larger than the server accepts");
        return -1;
      }
    } else {
      body_read_ += n;
      if (body_chunked_ && !chunk_framing_ok(buf_ + pos_, n)) {
        refuse(400, "Bad Request", "BadRequest", "malformed or oversized chunk framing");
        return -1;
      }
    }
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (dead_) return -1;
    const auto deadline = Clock::now() + limits_.io_timeout;
    if (ssl_) {
      if (size == 0) return 0;
      for (;;) {
        ERR_clear_error();
        int n = SSL_write(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
        if (n > 0) return n;
        if (!wait_tls(SSL_get_error(ssl_, n), deadline)) return -1;
      }
    }
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd_, POLLOUT, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return -1;
      ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      return n;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) address_of(addr, len, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) address_of(addr, len, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  bool fill() {
    const auto deadline = in_head_ ? head_deadline_ : Clock::now() + limits_.io_timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      int r = ssl_ && SSL_pending(ssl_) > 0 ? 1 : left <= 0 ? 0 : ::poll(&p, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) {
        if (in_head_ && head_bytes_ > 0) {
          refuse(408, "Request Timeout", "RequestTimeout", "request headers did not arrive in time");
        }
        dead_ = true;
        return false;
      }
      if (r < 0) return false;
      if (ssl_) {
        for (;;) {
          ERR_clear_error();
          int n = SSL_read(ssl_, buf_, sizeof buf_);
          if (n > 0) {
            pos_ = 0;
            len_ = static_cast<std::size_t>(n);
            return true;
          }
          int err = SSL_get_error(ssl_, n);
          if (err == SSL_ERROR_WANT_READ) break;  // a record not yet complete: poll again
          if (err == SSL_ERROR_WANT_WRITE && wait_tls(err, deadline)) continue;
          dead_ = true;  // close_notify, reset or a TLS error
          return false;
        }
        continue;
      }
      ssize_t n = ::recv(fd_, buf_, sizeof buf_, 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        dead_ = true;
        return false;
      }
      pos_ = 0;
      len_ = static_cast<std::size_t>(n);
      return true;
    }
  }

  // Follows the chunked framing of a request body as it is read, so that cpp-httplib's line reader
  // (unbounded) never sees a chunk-size or trailer line longer than 4 KiB.
  bool chunk_framing_ok(const char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      if (chunk_left_ > 0) {  // inside chunk data: skip it whole
        std::size_t k = std::min<std::uint64_t>(chunk_left_, n - i);
        chunk_left_ -= k;
        i += k - 1;
        if (chunk_left_ == 0) chunk_line_ = 0, chunk_after_data_ = true;
        continue;
      }
      const char c = p[i];
      if (++chunk_line_ > 4096) return false;
      if (c != '\n') {
        if (chunk_line_ == 1 && !chunk_after_data_) chunk_size_ = 0, chunk_hex_ = true;
        if (chunk_hex_ && !chunk_after_data_ && !chunk_trailer_) {
          int v = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
          if (v < 0) {
            chunk_hex_ = false;  // extensions or CR follow
          } else {
            if (chunk_size_ >> 58) return false;
            chunk_size_ = chunk_size_ * 16 + static_cast<unsigned>(v);
          }
        }
        continue;
      }
      // end of a line
      if (chunk_after_data_) {  // the CRLF after chunk data
        chunk_after_data_ = false;
      } else if (chunk_trailer_) {
        if (chunk_line_ <= 2) chunk_trailer_ = false;  // the empty line ends the body
        else if ((trailer_bytes_ += chunk_line_) > 16384) return false;
      } else if (chunk_size_ == 0) {
        chunk_trailer_ = true;
      } else {
        chunk_left_ = chunk_size_;
      }
      chunk_line_ = 0;
      chunk_hex_ = true;
      chunk_size_ = 0;
    }
    return true;
  }

  void refuse(int status, const char* reason, const char* code, const char* message) {
    if (ssl_) {
      std::string out = raw_error(status, reason, code, message);
      in_head_ = false;
      write(out.data(), out.size());
    } else {
      send_raw_error(fd_, status, reason, code, message, 1000);
    }
    dead_ = true;
  }

  // Waits for the socket as OpenSSL asks (WANT_READ / WANT_WRITE) until `deadline`; false for any
  // other error or on time-out.
  bool wait_tls(int err, Clock::time_point deadline) const {
    short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (!events) return false;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd_, events, 0};
      int r = left <= 0 ? 0 : ::poll(&p, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      return r > 0;
    }
  }

  int fd_;
  SSL* ssl_ = nullptr;
  const ConnectionLimits& limits_;
  const std::atomic<socket_t>& server_socket_;
  char buf_[16 * 1024];
  std::size_t pos_ = 0, len_ = 0;
  bool in_head_ = false, dead_ = false, body_chunked_ = false;
  std::size_t head_bytes_ = 0;
  Clock::time_point head_deadline_;
  std::uint64_t body_read_ = 0, body_length_ = 0;
  std::uint64_t chunk_left_ = 0, chunk_size_ = 0;
  std::size_t chunk_line_ = 0, trailer_bytes_ = 0;
  bool chunk_hex_ = true, chunk_after_data_ = false, chunk_trailer_ = false;
};

thread_local Connection* t_connection = nullptr;
}  // namespace

GuardedServer::GuardedServer(ConnectionLimits limits) : limits_(limits) {
  new_task_queue = [this] { return new ElasticPool(limits_.keep_threads, limits_.max_connections); };
}

GuardedServer::~GuardedServer() {
  if (tls_) SSL_CTX_free(tls_);
}

std::string GuardedServer::use_tls(const std::string& cert_file, const std::string& key_file) {
  auto openssl_error = [](std::string what) {
    unsigned long e = ERR_get_error();
    char buf[256] = {};
    if (e) ERR_error_string_n(e, buf, sizeof buf);
    ERR_clear_error();
    return e ? what + ": " + buf : what;
  };
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return openssl_error("cannot create a TLS context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  std::string err;
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    err = openssl_error("cannot read the TLS certificate " + cert_file);
  } else if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    err = openssl_error("cannot read the TLS key " + key_file);
  } else if (SSL_CTX_check_private_key(ctx) != 1) {
    err = openssl_error("the TLS key " + key_file + " does not match the certificate " + cert_file);
  }
  if (!err.empty()) {
    SSL_CTX_free(ctx);
    return err;
  }
  if (tls_) SSL_CTX_free(tls_);
  tls_ = ctx;
  return {};
}

void GuardedServer::widen_backlog(int backlog) {
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, backlog);
}

bool GuardedServer::request_is_tls() { return t_connection && t_connection->tls(); }

void GuardedServer::close_after_response() {
  if (t_connection) t_connection->close_ = true;
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  if (t_refuse) {
    send_raw_error(sock, 503, "Service Unavailable", "ServiceUnavailable", "too many connections", 100);
    close_socket(sock);
    return false;
  }
  ++open_;
  Connection conn(sock, limits_, svr_sock_);
  if (tls_ && !conn.accept_tls(tls_)) {
    close_socket(sock);
    --open_;
    return false;
  }
  t_connection = &conn;
  bool ret = false;
  for (std::size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
    if (!conn.wait_for_request()) break;
    conn.begin_request();
    conn.head_done_ = false;
    bool closed = false;
    ret = process_request(conn, left == 1, closed, [&](httplib::Request& req) { conn.end_head(req); });
    if (!ret || closed || !conn.reusable()) break;
  }
  t_connection = nullptr;
  close_socket(sock);
  --open_;
  return ret;
}

}  // namespace khub::localhub
