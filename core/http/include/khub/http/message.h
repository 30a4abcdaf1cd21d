#pragma once
// One HTTP exchange as khub's transport sees it: a request goes in, a response comes out. Plain data,
// no libcurl: the client, the publisher and tests build and read these.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace khub::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// A byte range of a local file, sent as the request body without loading it into memory.
struct FileSlice {
  std::filesystem::path path;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

struct Response {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names; a repeated header keeps the last
  std::string body;                            // collected unless the request streams it
  std::string url;                             // the URL that answered
  [[nodiscard]] std::string header(std::string_view name) const;  // any case; "" when absent
  [[nodiscard]] bool ok() const noexcept { return status >= 200 && status < 300; }
  [[nodiscard]] bool is_redirect() const noexcept { return status >= 300 && status < 400 && status != 304; }
};

struct Request {
  std::string method = "GET";
  std::string url;
  Headers headers;
  std::string body;                 // sent when `file` is empty and the method is not GET/HEAD
  std::span<const std::byte> borrowed_body;  // sent instead of `body` when not empty, never copied:
                                             // the caller keeps the bytes alive (64 MiB xorbs)
  std::optional<FileSlice> file;    // streamed body (LFS and Xet PUTs)
  std::chrono::milliseconds timeout{10000};     // connect timeout, and the longest stall of a body
  std::chrono::milliseconds total_timeout{0};   // cap on the whole exchange; 0: none (a collected,
                                                // not streamed, body still ends after 3 × timeout)
  std::size_t max_body = std::size_t{4} << 20;  // collected bodies longer than this fail the exchange
  // Streams the body of a 2xx response (other bodies are still collected). Called first with the
  // final status and headers (on_start), then per chunk; returning false aborts (Cancelled).
  std::function<bool(const Response&)> on_start;
  std::function<bool(std::string_view)> on_body;
  /// The body as sent: `borrowed_body`, or else `body`.
  [[nodiscard]] std::span<const std::byte> body_bytes() const {
    return borrowed_body.empty() ? std::as_bytes(std::span(body)) : borrowed_body;
  }
};

}  // namespace khub::http
