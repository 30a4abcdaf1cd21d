// UploadTransport over libcurl. Redirects are never followed and no credentials are added here:
// the caller decides which requests carry `Authorization`.
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "khub/base/curl_http_only.h"
#include "khub/publish/upload_transport.h"

namespace khub::publish {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

struct ReadState {
  std::ifstream in;
  std::uint64_t remaining = 0;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  std::string_view line(data, size * n);
  auto* headers = static_cast<Headers*>(user);
  if (line.starts_with("HTTP/")) {
    headers->clear();  // a new response (e.g. after 100 Continue)
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    auto value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
    headers->emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  return size * n;
}

size_t on_read(char* buffer, size_t size, size_t n, void* user) {
  auto* st = static_cast<ReadState*>(user);
  std::uint64_t want = std::min<std::uint64_t>(size * n, st->remaining);
  if (want == 0) return 0;
  st->in.read(buffer, static_cast<std::streamsize>(want));
  auto got = static_cast<std::uint64_t>(st->in.gcount());
  if (got == 0) return CURL_READFUNC_ABORT;
  st->remaining -= got;
  return static_cast<size_t>(got);
}

class CurlTransport final : public UploadTransport {
 public:
  explicit CurlTransport(CurlTransportOptions options) : options_(std::move(options)) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
  }

  Expected<HttpResponse> send(const HttpRequest& request) override {
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
    if (!curl) return Error(ErrorCode::Network, "cannot create a libcurl handle");
    CURL* h = curl.get();
    HttpResponse response;
    curl_slist* list = nullptr;
    for (const auto& [k, v] : request.headers) list = curl_slist_append(list, (k + ": " + v).c_str());
    list = curl_slist_append(list, "Expect:");  // no 100-continue round trip
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(list, curl_slist_free_all);
    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    restrict_to_http(h);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h, CURLOPT_USERAGENT, options_.user_agent.c_str());
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, options_.connect_timeout_s);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, options_.timeout_s);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &response.body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &response.headers);
    ReadState read;
    if (request.method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (request.file) {
      read.in.open(request.file->path, std::ios::binary);
      if (!read.in) return Error(ErrorCode::Io, "cannot read " + request.file->path.string());
      read.in.seekg(static_cast<std::streamoff>(request.file->offset));
      read.remaining = request.file->length;
      curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
      curl_easy_setopt(h, CURLOPT_READDATA, &read);
      curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.file->length));
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    } else if (request.method != "GET") {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    CURLcode rc = curl_easy_perform(h);
    if (rc != CURLE_OK) {
      return Error(ErrorCode::Network, request.method + " " + redact(request.url) + ": " + curl_easy_strerror(rc));
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    response.status = static_cast<int>(status);
    return response;
  }

 private:
  static std::string redact(const std::string& url) {
    auto q = url.find('?');
    return q == std::string::npos ? url : url.substr(0, q) + "?…";
  }
  CurlTransportOptions options_;
};

}  // namespace

std::string HttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return {};
}

std::unique_ptr<UploadTransport> make_curl_transport(CurlTransportOptions options) {
  return std::make_unique<CurlTransport>(std::move(options));
}

}  // namespace khub::publish
