#pragma once
// A server on 127.0.0.1 that answers however a test tells it to: any status line, headers, body,
// delay or endless stream, byte by byte. For the transport's bounds on what a hostile Hub can send.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace khub::test {

class HostileServer {
 public:
  /// Called once per connection with the request head (up to the blank line); writes the answer.
  using Handler = std::function<void(HostileServer& server, int fd, const std::string& head)>;

  explicit HostileServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    ::listen(listen_fd_, 64);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~HostileServer() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    acceptor_.join();
    std::lock_guard<std::mutex> g(mutex_);
    for (auto& t : connections_) t.join();
  }
  HostileServer(const HostileServer&) = delete;
  HostileServer& operator=(const HostileServer&) = delete;

  [[nodiscard]] std::string url(std::string_view path = "/") const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }
  [[nodiscard]] bool stopping() const noexcept { return stop_; }
  /// Writes bytes; false once the peer is gone or the server stops.
  bool send(int fd, std::string_view bytes) const {
    while (!bytes.empty() && !stop_) {
      const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return !stop_;
  }
  /// Sends `bytes` one byte every `gap`, until done, the peer leaves or the server stops.
  bool drip(int fd, std::string_view bytes, std::chrono::milliseconds gap) const {
    for (char c : bytes) {
      if (!send(fd, std::string_view(&c, 1))) return false;
      std::this_thread::sleep_for(gap);
    }
    return true;
  }
  /// Sends `chunk` again and again until the peer leaves or the server stops.
  void endless(int fd, std::string_view chunk) const {
    while (send(fd, chunk)) {
    }
  }

 private:
  void accept_loop() {
    while (!stop_) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      std::lock_guard<std::mutex> g(mutex_);
      connections_.emplace_back([this, fd] {
        std::string head;
        char c;
        while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536 && ::recv(fd, &c, 1, 0) == 1)
          head.push_back(c);
        handler_(*this, fd, head);
        ::shutdown(fd, SHUT_RDWR);
        ::close(fd);
      });
    }
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> connections_;
};

}  // namespace khub::test
