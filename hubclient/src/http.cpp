#include "http.h"

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <mutex>

#include "khub/base/curl_http_only.h"
#include "khub/base/redact.h"

namespace khub::hub::detail {
namespace {

struct GlobalInit {
  GlobalInit() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

struct Exchange {
  const HttpRequest* request = nullptr;
  HttpResponse response;
  CURL* easy = nullptr;
  bool started = false;   // on_start was called for this response
  bool streaming = false; // body goes to on_body
  bool aborted = false;
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after 100-continue or similar)
    ex->response.headers.clear();
    ex->started = false;
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos)
    ex->response.headers[lower(std::string(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  return size * n;
}

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const auto* req = ex->request;
  if (!ex->started) {
    ex->started = true;
    curl_easy_getinfo(ex->easy, CURLINFO_RESPONSE_CODE, &ex->response.status);
    ex->streaming = req->on_body && ex->response.status >= 200 && ex->response.status < 300;
    if (ex->streaming && req->on_start && !req->on_start(ex->response)) {
      ex->aborted = true;
      return 0;
    }
  }
  std::string_view chunk(data, size * n);
  if (ex->streaming) {
    if (!req->on_body(chunk)) {
      ex->aborted = true;
      return 0;
    }
  } else if (ex->response.body.size() < (4u << 20)) {  // error and API bodies; cap at 4 MiB
    ex->response.body.append(chunk);
  }
  return size * n;
}

}  // namespace

struct HttpClient::Pool {
  CURLSH* share = nullptr;
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks;
  std::mutex idle_mutex;
  std::vector<CURL*> idle;

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Pool*>(user)->locks[data].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) { static_cast<Pool*>(user)->locks[data].unlock(); }

  Pool() {
    static GlobalInit init;
    share = curl_share_init();
    curl_share_setopt(share, CURLSHOPT_LOCKFUNC, &Pool::lock);
    curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, &Pool::unlock);
    curl_share_setopt(share, CURLSHOPT_USERDATA, this);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
  ~Pool() {
    for (CURL* e : idle) curl_easy_cleanup(e);
    curl_share_cleanup(share);
  }
  CURL* take() {
    {
      std::lock_guard<std::mutex> g(idle_mutex);
      if (!idle.empty()) {
        CURL* e = idle.back();
        idle.pop_back();
        curl_easy_reset(e);
        return e;
      }
    }
    return curl_easy_init();
  }
  void give(CURL* e) {
    std::lock_guard<std::mutex> g(idle_mutex);
    idle.push_back(e);
  }
};

HttpClient::HttpClient() : pool_(std::make_unique<Pool>()) {}
HttpClient::~HttpClient() = default;

Expected<HttpResponse> HttpClient::perform(const HttpRequest& request) {
  ++requests_;
  CURL* easy = pool_->take();
  if (!easy) return Error(ErrorCode::Network, "cannot create an HTTP handle");
  Exchange ex;
  ex.request = &request;
  ex.easy = easy;
  curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  headers = curl_slist_append(headers, "Accept-Encoding: identity");
  headers = curl_slist_append(headers, "Expect:");

  curl_easy_setopt(easy, CURLOPT_SHARE, pool_->share);
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  restrict_to_http(easy);
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &on_write);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 512L * 1024L);
  long timeout_ms = static_cast<long>(std::max<long long>(request.timeout.count(), 1));
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, std::max(1L, timeout_ms / 1000));
  if (request.total_timeout) curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 3 * timeout_ms);
  if (request.method == "HEAD") {
    curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  } else if (request.method == "POST") {
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
  } else if (request.method != "GET") {
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }

  CURLcode rc = curl_easy_perform(easy);
  curl_slist_free_all(headers);
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &ex.response.status);
  char* effective = nullptr;
  curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &effective);
  ex.response.url = effective ? effective : request.url;
  pool_->give(easy);

  if (rc != CURLE_OK) {
    if (ex.aborted) return Error(ErrorCode::Cancelled, request.method + " " + redact(request.url) + ": aborted");
    Error e(ErrorCode::Network, request.method + " " + redact(request.url) + " failed: " + curl_easy_strerror(rc),
            "check the network connection and HF_ENDPOINT, then retry");
    e.http_status = static_cast<int>(ex.response.status);
    return e;
  }
  if (!ex.started && request.on_start && request.on_body && ex.response.status >= 200 &&
      ex.response.status < 300 && request.method != "HEAD") {
    // An empty 2xx body still reports its start so callers see the headers.
    if (!request.on_start(ex.response)) return Error(ErrorCode::Cancelled, "aborted");
  }
  return std::move(ex.response);
}

bool has_scheme(std::string_view url) {
  auto colon = url.find("://");
  if (colon == std::string_view::npos || colon == 0 || !std::isalpha(static_cast<unsigned char>(url[0]))) return false;
  return std::all_of(url.begin(), url.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
}

bool is_http_url(std::string_view url) {
  const std::string head = lower(std::string(url.substr(0, 8)));
  return head.starts_with("http://") || head.starts_with("https://");
}

std::string url_origin(std::string_view url) {
  if (!has_scheme(url)) return {};
  auto scheme = url.find("://");
  auto end = url.find_first_of("/?#", scheme + 3);
  return lower(std::string(url.substr(0, end)));
}

std::string join_url(std::string_view base, std::string_view location) {
  if (has_scheme(location)) return std::string(location);
  auto scheme = base.find("://");
  if (location.rfind("//", 0) == 0) return std::string(base.substr(0, scheme + 1)) + std::string(location);
  std::string origin(base.substr(0, base.find('/', scheme + 3)));
  if (!location.empty() && location.front() == '/') return origin + std::string(location);
  std::string b(base.substr(0, base.find('?')));
  return b.substr(0, b.rfind('/') + 1) + std::string(location);
}

}  // namespace khub::hub::detail
