#include "khub/localhub/server.h"

#include <fcntl.h>
#include <netdb.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/random.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <condition_variable>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "connection.h"
#include "dispatch.h"
#include "fault.h"
#include "http_util.h"
#include "khub/base/fs.h"
#include "khub/base/hash.h"

namespace khub::localhub {

namespace {
using Clock = std::chrono::steady_clock;

// Per-request state kept between the pre-routing hook, the handler and the logger; each
// connection is served by one worker thread at a time.
thread_local Clock::time_point t_start;
thread_local std::optional<FaultRule> t_fault;

// Request ids: unique enough to trace a request, not secret.
std::string random_hex(size_t bytes) {
  thread_local std::mt19937_64 rng(std::random_device{}());
  std::string out;
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < bytes; ++i) {
    auto b = static_cast<unsigned>(rng() & 0xff);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

// The key that signs LFS URLs: 32 bytes from the kernel's CSPRNG (a guessable key would let anyone
// forge URLs for any stored blob, private repos' too), kept in a file only the owner can read.
Expected<std::string> load_secret(const std::filesystem::path& root) {
  auto file = root / "url-secret";
  std::ifstream in(file);
  std::string secret;
  if (in && std::getline(in, secret) && secret.size() == 64) return secret;
  std::array<std::uint8_t, 32> key{};
  for (std::size_t got = 0; got < key.size();) {
    const ssize_t n = ::getrandom(key.data() + got, key.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error(ErrorCode::Io, std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  secret = to_hex(key);
  KHUB_CHECK(write_file_atomic(file, secret + '\n', 0600));
  return secret;
}

// One server per root: an flock on ROOT/serve.lock, held for the server's life (the kernel drops it
// when the process dies, so a crash leaves no stale lock). Start-up clean-up runs only under it, so
// it never removes another live server's temp files or uploads. The file holds the holder's pid,
// for the message only.
Expected<int> lock_root(const std::filesystem::path& root) {
  std::error_code ec;
  if (root.has_parent_path()) std::filesystem::create_directories(root.parent_path(), ec);
  if (::mkdir(root.c_str(), 0700) != 0 && errno != EEXIST)  // a new store is the server's alone
    return Error(ErrorCode::Io, "cannot create store folder " + root.string() + ": " + std::strerror(errno));
  auto file = root / "serve.lock";
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Error(ErrorCode::Io, "cannot open " + file.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char pid[32] = {};
    (void)!::pread(fd, pid, sizeof pid - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK) return Error(ErrorCode::Io, "cannot lock " + file.string() + ": " + std::strerror(err));
    std::string holder(pid);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    if (holder.empty() || holder.find_first_not_of("0123456789") != std::string::npos) holder = "?";
    return Error(ErrorCode::Conflict, "another khub serve (pid " + holder + ") serves " + root.string(),
                 "stop it first, or pass another --root; `khub serve --gc` may run beside it");
  }
  auto text = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    // the pid is for messages only
  }
  return fd;
}

// Each connection holds a file descriptor: let the process have as many as its hard limit allows,
// and keep room below it for the store's own files.
int connection_cap(int wanted) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return wanted;
  if (rl.rlim_cur < rl.rlim_max) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max == RLIM_INFINITY ? std::max<rlim_t>(rl.rlim_cur, 65536) : rl.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) rl = raised;
  }
  if (rl.rlim_cur == RLIM_INFINITY) return wanted;
  const long room = static_cast<long>(rl.rlim_cur) - 128;
  return static_cast<int>(std::max(16L, std::min<long>(wanted, room)));
}

// Sends the response already in `res`, then closes the connection: used when the request body
// was not read (it must not be parsed as the next request) and to cut a body short.
void close_after(Res& res, std::size_t cut = std::string::npos) {
  GuardedServer::close_after_response();
  if (res.content_provider_) {
    auto inner = res.content_provider_;
    res.content_provider_ = [inner, cut](size_t off, size_t len, httplib::DataSink& sink) {
      if (off >= cut) return false;
      return inner(off, std::min(len, cut - off), sink) && cut == std::string::npos;
    };
    return;
  }
  if (res.body.empty()) return;
  auto body = std::make_shared<std::string>(std::move(res.body));
  res.body.clear();
  auto type = res.get_header_value("Content-Type");
  res.set_header("Connection", "close");
  res.set_content_provider(body->size(), type, [body, cut](size_t off, size_t len, httplib::DataSink& sink) {
    size_t n = std::min(len, cut == std::string::npos ? len : (cut > off ? cut - off : 0));
    if (n > 0) sink.write(body->data() + off, n);
    return false;
  });
}

// cpp-httplib's set_header appends; these headers must appear once.
void replace_header(Res& res, const std::string& key, const std::string& value) {
  res.headers.erase(key);
  res.set_header(key, value);
}

std::string flip_etag(std::string v) {
  for (auto it = v.rbegin(); it != v.rend(); ++it) {
    if (std::isxdigit(static_cast<unsigned char>(*it))) {
      *it = *it == '0' ? '1' : '0';
      break;
    }
  }
  return v;
}

void apply_response_fault(const Req& req, Res& res) {
  if (!t_fault) return;
  switch (t_fault->action) {
    case FaultAction::DropMidBody: {
      std::size_t total = res.content_provider_ ? res.content_length_ : res.body.size();
      close_after(res, total / 2);
      break;
    }
    case FaultAction::WrongSize:
      if (res.has_header("X-Linked-Size")) {
        replace_header(res, "X-Linked-Size", std::to_string(std::stoull(res.get_header_value("X-Linked-Size")) + 1));
      } else if (req.method == "HEAD" && res.content_provider_) {
        res.content_length_ += 1;
      }
      break;
    case FaultAction::WrongEtag:
      for (const char* h : {"ETag", "X-Linked-Etag"}) {
        if (res.has_header(h)) replace_header(res, h, flip_etag(res.get_header_value(h)));
      }
      break;
    default: break;
  }
}
}  // namespace

bool is_loopback_host(std::string_view host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<RepoStore> store;
  std::unique_ptr<Hub> hub;
  std::unique_ptr<FaultInjector> faults;
  std::unique_ptr<GuardedServer> http;
  std::thread listener;
  int lock_fd = -1;
  std::mutex join_mutex;
  int port = 0;

  void join() {
    std::lock_guard lock(join_mutex);
    if (listener.joinable() && listener.get_id() != std::this_thread::get_id()) listener.join();
  }

  httplib::Server::HandlerResponse before(const Req& req, Res& res) {
    t_start = Clock::now();
    // Methods nothing serves are refused from the head alone: cpp-httplib would otherwise read
    // their whole body (PATCH, PRI) into memory before any handler runs.
    if (req.method != "GET" && req.method != "HEAD" && req.method != "POST" && req.method != "PUT" &&
        req.method != "DELETE") {
      send_error(res, 405, "MethodNotAllowed", "method " + req.method + " is not supported here");
      close_after(res);
      return httplib::Server::HandlerResponse::Handled;
    }
    // Ranges are served by routes_files.cpp; keep cpp-httplib from applying them a second time.
    auto& mutable_req = const_cast<Req&>(req);
    mutable_req.ranges.clear();
    auto trace = req.get_header_value("X-Amzn-Trace-Id");
    res.set_header("X-Request-Id", trace.empty() ? random_hex(16) : trace);
    bool resolver = req.path.find("/resolve/") != std::string::npos || req.path.starts_with("/lfs-blob/");
    res.set_header("RateLimit", std::string(resolver ? "\"resolvers\"" : "\"api\"") + ";r=4999;t=300");
    res.set_header("RateLimit-Policy", std::string("\"fixed window\";") + (resolver ? "\"resolvers\"" : "\"api\"") +
                                           ";q=5000;w=300");
    t_fault = faults->match(req.method, req.path);
    if (!t_fault) return httplib::Server::HandlerResponse::Unhandled;
    switch (t_fault->action) {
      case FaultAction::Status:
        send_error(res, t_fault->status, t_fault->status == 503 ? "ServiceUnavailable" : "InternalError",
                   "injected fault: " + std::to_string(t_fault->status));
        close_after(res);
        return httplib::Server::HandlerResponse::Handled;
      case FaultAction::RateLimit: {
        auto t = std::to_string(t_fault->seconds);
        replace_header(res, "RateLimit", std::string(resolver ? "\"resolvers\"" : "\"api\"") + ";r=0;t=" + t);
        res.set_header("Retry-After", t);
        send_error(res, 429, "RateLimited", "injected fault: rate limited, retry in " + t + " s");
        close_after(res);
        return httplib::Server::HandlerResponse::Handled;
      }
      case FaultAction::Slow: std::this_thread::sleep_for(std::chrono::milliseconds(t_fault->millis)); break;
      case FaultAction::IgnoreRange: {
        auto it = mutable_req.headers.find("Range");
        if (it != mutable_req.headers.end()) mutable_req.headers.erase(it);
        break;
      }
      default: break;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  void log(const Req& req, const Res& res) const {
    if (!options.request_log) return;
    auto ms = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
    std::size_t bytes = res.content_provider_ ? res.content_length_ : res.body.size();
    auto q = req.target.find('?');
    std::ostringstream line;
    line.precision(1);
    line << req.remote_addr << " \"" << req.method << ' ' << req.target.substr(0, q) << "\" " << res.status << ' '
         << (req.method == "HEAD" ? 0 : bytes) << "B " << std::fixed << ms << "ms";
    options.request_log(line.str());
  }
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>()) { impl_->options = std::move(options); }

Server::~Server() { stop(); }

Status Server::start() {
  auto& o = impl_->options;
  {  // before anything is created: a host that is no address can never be bound
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(o.host.c_str(), nullptr, &hints, &found); rc != 0) {
      return Error(ErrorCode::InvalidArgument, "--host " + o.host + " is no address: " + ::gai_strerror(rc),
                   "use an address of this machine, such as 127.0.0.1, or 0.0.0.0 for all");
    }
    ::freeaddrinfo(found);
  }
  if (!is_loopback_host(o.host) && o.config.tokens.empty()) {
    return Error(ErrorCode::InvalidArgument,
                 "refusing to serve on " + o.host + " without tokens: anyone on the network could write",
                 "pass --token TOKEN[:read|:write] (or a config file with tokens), or bind 127.0.0.1");
  }
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    return Error(ErrorCode::InvalidArgument, "a TLS certificate needs its key, and a key its certificate",
                 "pass both --tls-cert FILE and --tls-key FILE");
  }
  if (o.port < 0 || o.port > 65535)
    return Error(ErrorCode::InvalidArgument, "port " + std::to_string(o.port) + " is out of range",
                 "pass a port from 1 to 65535, or 0 to pick a free one");
  if (impl_->lock_fd < 0) {
    KHUB_TRY(impl_->lock_fd, lock_root(o.root));
  }
  auto st = start_locked();
  if (!st) {  // a server that did not start holds no root
    impl_->http.reset();
    impl_->hub.reset();
    impl_->store.reset();
    ::close(impl_->lock_fd);
    impl_->lock_fd = -1;
  }
  return st;
}

Status Server::start_locked() {
  auto& o = impl_->options;
  KHUB_TRY(impl_->store, RepoStore::open(o.root, o.store));
  KHUB_TRY(auto secret, load_secret(o.root));
  impl_->hub = std::make_unique<Hub>(Hub{*impl_->store, o.config, secret, 0});
  impl_->hub->xet_token_seconds = std::max(1, o.xet_token_seconds);
  impl_->faults = std::make_unique<FaultInjector>(o.config.faults);

  ConnectionLimits limits;
  limits.keep_threads = static_cast<std::size_t>(std::max(4, o.threads));
  limits.max_connections = static_cast<std::size_t>(connection_cap(std::max(16, o.max_connections)));
  limits.max_head_bytes = std::max<std::size_t>(4096, o.max_header_bytes);
  limits.head_timeout = std::chrono::seconds(std::max(1, o.header_timeout_s));
  limits.idle_timeout = std::chrono::seconds(std::max(1, o.idle_timeout_s));
  impl_->http = std::make_unique<GuardedServer>(limits);
  auto& http = *impl_->http;
  if (!o.tls_cert.empty()) {
    if (auto err = http.use_tls(o.tls_cert.string(), o.tls_key.string()); !err.empty()) {
      return Error(ErrorCode::InvalidArgument, err, "pass a PEM certificate chain and its PEM private key");
    }
  }
  http.set_keep_alive_max_count(1000);
  http.set_keep_alive_timeout(o.idle_timeout_s);
  http.set_tcp_nodelay(true);
  auto* impl = impl_.get();
  http.set_pre_routing_handler([impl](const Req& req, Res& res) { return impl->before(req, res); });
  http.Get(".*", [impl](const Req& req, Res& res) {
    dispatch_read(*impl->hub, req, res);
    apply_response_fault(req, res);
  });
  auto write = [impl](const Req& req, Res& res, const Reader& reader) {
    bool consumed = false;
    Reader tracked(
        [&](httplib::ContentReceiver r) { return consumed = reader(std::move(r)); },
        [&](httplib::MultipartContentHeader h, httplib::ContentReceiver r) { return consumed = reader(std::move(h), std::move(r)); });
    dispatch_write(*impl->hub, req, res, tracked);
    bool has_body = req.get_header_value("Content-Length") != "0" &&
                    (req.has_header("Content-Length") || req.has_header("Transfer-Encoding"));
    if (has_body && !consumed) close_after(res);
    apply_response_fault(req, res);
  };
  http.Post(".*", write);
  http.Put(".*", write);
  http.Delete(".*", write);
  http.set_logger([impl](const Req& req, const Res& res) {
    if (res.get_header_value("Connection") == "close") GuardedServer::close_after_response();
    impl->log(req, res);
  });
  // Errors cpp-httplib produces itself (bad request line, oversized headers, malformed Range,
  // URI too long) get the same JSON body and X-Error-Code as the routes' errors.
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const Req& req, Res& res) {
    if (res.has_header("X-Error-Code") || !res.body.empty() || res.content_provider_) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    const_cast<Req&>(req).ranges.clear();
    static const std::map<int, std::pair<const char*, const char*>> kCodes{
        {400, {"BadRequest", "malformed request line or headers"}},
        {404, {"NotFound", "no such route"}},
        {413, {"PayloadTooLarge", "request body too large"}},
        {414, {"UriTooLong", "request URI too long"}},
        {416, {"RangeNotSatisfiable", "malformed Range header"}}};
    auto it = kCodes.find(res.status);
    send_error(res, res.status, it == kCodes.end() ? "InternalError" : it->second.first,
               it == kCodes.end() ? "internal error" : it->second.second);
    res.set_header("Connection", "close");
    return httplib::Server::HandlerResponse::Handled;
  }));
  // A JSON field of the wrong type throws inside nlohmann::json: answer 400, never 500.
  http.set_exception_handler([](const Req&, Res& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const nlohmann::json::exception& e) {
      send_error(res, 400, "BadRequest", std::string("malformed JSON field: ") + e.what());
    } catch (const std::exception& e) {
      send_error(res, 500, "InternalError", e.what());
    } catch (...) {
      send_error(res, 500, "InternalError", "unknown error");
    }
    close_after(res);
  });

  // cpp-httplib sets SO_REUSEPORT too, which lets a second server share a busy port and take half
  // of its requests; SO_REUSEADDR alone still allows a quick restart.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  if (o.port == 0) {
    impl_->port = http.bind_to_any_port(o.host);
    if (impl_->port < 0)
      return Error(ErrorCode::Network, "cannot bind " + o.host + " (any port)",
                   "is " + o.host + " an address of this machine? 127.0.0.1 and 0.0.0.0 always are");
  } else {
    if (!http.bind_to_port(o.host, o.port)) {
      return Error(ErrorCode::Network, "cannot bind " + o.host + ":" + std::to_string(o.port),
                   "is another server using that port? pass --port 0 to pick a free one");
    }
    impl_->port = o.port;
  }
  http.widen_backlog(static_cast<int>(std::min<std::size_t>(limits.max_connections, 4096)));
  impl_->hub->port = impl_->port;
  impl_->listener = std::thread([impl] { impl->http->listen_after_bind(); });
  for (int i = 0; i < 500 && !http.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return {};
}

int Server::port() const { return impl_->port; }

std::string Server::url() const {
  auto host = impl_->options.host;
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  return (impl_->options.tls_cert.empty() ? "http://" : "https://") + host + ":" + std::to_string(impl_->port);
}

void Server::wait() { impl_->join(); }

void Server::stop() {
  if (!impl_) return;
  if (impl_->http) impl_->http->stop();
  impl_->join();
  if (impl_->lock_fd >= 0) {
    ::close(impl_->lock_fd);
    impl_->lock_fd = -1;
  }
}

RepoStore& Server::store() { return *impl_->store; }

}  // namespace khub::localhub
