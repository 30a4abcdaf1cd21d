// The libcurl Transport: one connection pool (connections, DNS and TLS sessions shared between
// threads through a curl share handle), idle easy handles reused, http/https only, no redirect
// following, bodies bounded, uploads streamed from files.
#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <fstream>
#include <mutex>

#include "khub/base/redact.h"
#include "khub/base/text.h"
#include "khub/http/transport.h"

namespace khub::http {
namespace {

struct GlobalInit {
  GlobalInit() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

// A hostile Hub or CDN must not turn a request into a file://, gopher:// or other protocol request.
void restrict_to_http(CURL* easy) {
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85: the string forms; the bitmask ones are deprecated there
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}

struct Exchange {
  const Request* request = nullptr;
  Response response;
  CURL* easy = nullptr;
  bool started = false;    // on_start was called for this response
  bool streaming = false;  // body goes to on_body
  bool aborted = false;    // a callback said stop
  bool too_long = false;   // a collected body passed max_body
  bool too_slow = false;   // a collected body outlasted its time budget
  bool cut = false;        // an error or redirect body reached max_body: the rest is not read
  bool stalled = false;    // no byte moved either way for the request's timeout
  curl_off_t moved = -1;   // bytes received + sent at the last progress call
  std::chrono::steady_clock::time_point last_move;  // when `moved` last grew
  std::chrono::steady_clock::time_point deadline;  // for collected (non-streamed) bodies
  std::ifstream upload;
  std::uint64_t upload_left = 0;
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {  // a new response (after 100-continue or similar)
    ex->response.headers.clear();
    ex->started = false;
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos) ex->response.headers[ascii_lower(line.substr(0, colon))] = trim_space(line.substr(colon + 1));
  return size * n;
}

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const auto* req = ex->request;
  if (!ex->started) {
    ex->started = true;
    curl_easy_getinfo(ex->easy, CURLINFO_RESPONSE_CODE, &ex->response.status);
    ex->streaming = req->on_body && ex->response.ok();
    if (ex->streaming && req->on_start && !req->on_start(ex->response)) {
      ex->aborted = true;
      return 0;
    }
  }
  std::string_view chunk(data, size * n);
  // A collected body (API answer, error or redirect page) has a time budget as well as a size
  // limit: a server dripping a byte at a time must not hold the caller for minutes.
  if (!ex->streaming && std::chrono::steady_clock::now() > ex->deadline) {
    ex->too_slow = true;
    return 0;
  }
  if (ex->streaming) {
    if (!req->on_body(chunk)) {
      ex->aborted = true;
      return 0;
    }
    return size * n;
  }
  if (ex->response.body.size() + chunk.size() > req->max_body) {
    if (!ex->response.ok()) {  // an error or redirect body: its beginning is all anyone reads
      ex->response.body.append(chunk.substr(0, req->max_body - ex->response.body.size()));
      ex->cut = true;
      return 0;
    }
    ex->too_long = true;
    return 0;
  }
  ex->response.body.append(chunk);
  return size * n;
}

// libcurl calls this at least once a second, also while nothing arrives: a body that stops is cut
// `timeout` after its last byte (curl's own low-speed check averages over 5 s and rounds to whole
// seconds, so it fired 5-6 s late).
int on_progress(void* user, curl_off_t, curl_off_t received, curl_off_t, curl_off_t sent) {
  auto* ex = static_cast<Exchange*>(user);
  const auto now = std::chrono::steady_clock::now();
  if (received + sent != ex->moved) {
    ex->moved = received + sent;
    ex->last_move = now;
    return 0;
  }
  if (now - ex->last_move < ex->request->timeout) return 0;
  ex->stalled = true;
  return 1;
}

size_t on_read(char* buffer, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const std::uint64_t want = std::min<std::uint64_t>(size * n, ex->upload_left);
  if (want == 0) return 0;
  ex->upload.read(buffer, static_cast<std::streamsize>(want));
  const auto got = static_cast<std::uint64_t>(ex->upload.gcount());
  if (got == 0) return CURL_READFUNC_ABORT;
  ex->upload_left -= got;
  return static_cast<size_t>(got);
}

class CurlTransport final : public Transport {
 public:
  explicit CurlTransport(TransportOptions options) : options_(std::move(options)) {
    static GlobalInit init;
    share_ = curl_share_init();
    curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &CurlTransport::lock);
    curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &CurlTransport::unlock);
    curl_share_setopt(share_, CURLSHOPT_USERDATA, this);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
  ~CurlTransport() override {
    for (CURL* e : idle_) curl_easy_cleanup(e);
    curl_share_cleanup(share_);
  }
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  Expected<Response> perform(const Request& request) override;

 private:
  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<CurlTransport*>(user)->locks_[data].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) { static_cast<CurlTransport*>(user)->locks_[data].unlock(); }

  CURL* take() {
    {
      std::lock_guard<std::mutex> g(idle_mutex_);
      if (!idle_.empty()) {
        CURL* e = idle_.back();
        idle_.pop_back();
        curl_easy_reset(e);
        return e;
      }
    }
    return curl_easy_init();
  }
  void give(CURL* e) {
    std::lock_guard<std::mutex> g(idle_mutex_);
    idle_.push_back(e);
  }

  TransportOptions options_;
  CURLSH* share_ = nullptr;
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks_;
  std::mutex idle_mutex_;
  std::vector<CURL*> idle_;
};

Expected<Response> CurlTransport::perform(const Request& request) {
  CURL* easy = take();
  if (!easy) return Error(ErrorCode::Network, "cannot create an HTTP handle");
  Exchange ex;
  ex.request = &request;
  ex.easy = easy;
  ex.deadline = std::chrono::steady_clock::now() +
                (request.total_timeout.count() > 0 ? request.total_timeout : 3 * request.timeout);
  bool has_user_agent = false;
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    has_user_agent = has_user_agent || ascii_lower(name) == "user-agent";
    headers = curl_slist_append(headers, (name + ": " + value).c_str());
  }
  if (!has_user_agent) headers = curl_slist_append(headers, ("User-Agent: " + options_.user_agent).c_str());
  headers = curl_slist_append(headers, "Accept-Encoding: identity");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip

  curl_easy_setopt(easy, CURLOPT_SHARE, share_);
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  restrict_to_http(easy);
  if (!options_.ca_file.empty()) {
    curl_easy_setopt(easy, CURLOPT_CAINFO, options_.ca_file.c_str());
  } else if (!options_.ca_dir.empty()) {
    curl_easy_setopt(easy, CURLOPT_CAINFO, nullptr);  // the directory alone, not beside the system bundle
    curl_easy_setopt(easy, CURLOPT_CAPATH, options_.ca_dir.c_str());
  }
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &on_write);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 512L * 1024L);
  const long timeout_ms = static_cast<long>(std::max<long long>(request.timeout.count(), 1));
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  ex.last_move = std::chrono::steady_clock::now();
  curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, &on_progress);
  curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &ex);
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);  // a backstop, should the progress calls stop
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, std::max(1L, timeout_ms / 1000));
  if (request.total_timeout.count() > 0)
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_timeout.count()));
  if (request.method == "HEAD") {
    curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  } else if (request.file) {
    ex.upload.open(request.file->path, std::ios::binary);
    if (!ex.upload) {
      curl_slist_free_all(headers);
      give(easy);
      return Error(ErrorCode::Io, "cannot read " + request.file->path.string());
    }
    ex.upload.seekg(static_cast<std::streamoff>(request.file->offset));
    ex.upload_left = request.file->length;
    curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, &on_read);
    curl_easy_setopt(easy, CURLOPT_READDATA, &ex);
    curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.file->length));
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  } else if (request.method != "GET") {
    const auto body = request.body_bytes();
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    if (request.method != "POST") curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }

  const CURLcode rc = curl_easy_perform(easy);
  curl_slist_free_all(headers);
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &ex.response.status);
  char* effective = nullptr;
  curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &effective);
  ex.response.url = effective ? effective : request.url;
  give(easy);

  const std::string what = request.method + " " + redact(request.url);
  if (ex.too_long)
    return Error(ErrorCode::Protocol, what + ": the answer is longer than " + std::to_string(request.max_body) + " bytes",
                 "the server is not a Hugging Face Hub, or is misbehaving");
  if (ex.too_slow)
    return Error(ErrorCode::Network, what + ": the answer took longer than its time budget",
                 "the server is slow or misbehaving; retry later");
  if (rc != CURLE_OK && !(ex.cut && rc == CURLE_WRITE_ERROR)) {
    if (ex.aborted) return Error(ErrorCode::Cancelled, what + ": aborted");
    if (ex.stalled)
      return Error(ErrorCode::Network,
                   what + ": no data for " + std::to_string(request.timeout.count()) + " ms (the transfer stalled)",
                   "check the network connection and HF_ENDPOINT, then retry");
    // Not retried (only Network is): asking again does not make the certificate trusted.
    if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
      return Error(ErrorCode::Untrusted, what + " failed: " + curl_easy_strerror(rc),
                   "for a server whose certificate a private CA signed, set SSL_CERT_FILE to that CA's PEM file");
    Error e(ErrorCode::Network, what + " failed: " + curl_easy_strerror(rc),
            "check the network connection and HF_ENDPOINT, then retry");
    e.http_status = static_cast<int>(ex.response.status);
    return e;
  }
  if (!ex.started && request.on_start && request.on_body && ex.response.ok() && request.method != "HEAD") {
    // An empty 2xx body still reports its start so callers see the headers.
    if (!request.on_start(ex.response)) return Error(ErrorCode::Cancelled, what + ": aborted");
  }
  return std::move(ex.response);
}

}  // namespace

std::unique_ptr<Transport> make_curl_transport(TransportOptions options) {
  return std::make_unique<CurlTransport>(std::move(options));
}

}  // namespace khub::http
