#pragma once
// The one seam between `khub push` and the network: a request goes in, a response (or a transport
// failure) comes out. The push logic adds auth, retries and JSON; a fake can stand in for tests.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "khub/base/error.h"

namespace khub::publish {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// A byte range of a local file, sent as the request body without loading it into memory.
struct FileSlice {
  std::filesystem::path path;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  Headers headers;
  std::string body;                     // used when `file` is empty
  std::optional<FileSlice> file;        // streamed body (LFS PUTs)
};

struct HttpResponse {
  int status = 0;
  Headers headers;  // names as received
  std::string body;
  /// First header with this name (case-insensitive), or "".
  [[nodiscard]] std::string header(std::string_view name) const;
};

class UploadTransport {
 public:
  virtual ~UploadTransport() = default;
  /// Sends one request; never follows redirects. Network on connect/timeout/transfer failure
  /// (any HTTP status, 4xx/5xx included, is a response, not an error); Io if a body file is unreadable.
  [[nodiscard]] virtual Expected<HttpResponse> send(const HttpRequest& request) = 0;
};

struct CurlTransportOptions {
  long connect_timeout_s = 10;
  long timeout_s = 600;  // whole request; LFS parts can be large
  std::string user_agent = "khub";
};

/// libcurl implementation (one easy handle per request, TLS verification on).
[[nodiscard]] std::unique_ptr<UploadTransport> make_curl_transport(CurlTransportOptions options = {});

}  // namespace khub::publish
