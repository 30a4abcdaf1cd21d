#pragma once
// What the Hub's answers mean, as pure functions shared by every khub client of the Hub (hub
// client, publisher, Xet): errors from status and X-Error-Code, pagination links and which hosts
// may receive the token. Documented in docs/protocol.md.
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "khub/base/error.h"
#include "khub/http/message.h"

namespace khub::http {

/// What a failed call was about, so a 404 can name the right object and a 401/403 the right fix.
struct ErrorContext {
  std::string_view repo_id;   // "" : "the repository"
  std::string_view revision;
  std::string_view path;
  bool write = false;          // an upload call: hints speak of write access
};

/// Maps a non-2xx response to a khub Error in huggingface_hub's matching order: X-Error-Code
/// (RevisionNotFound, EntryNotFound, GatedRepo, RepoNotFound), "access disabled", a 401 on a repo
/// URL as RepoNotFound, then 400, 401, 403, 409/412, 416, 429, 5xx. One line naming the object, then
/// method, redacted URL, status and request id; the server's message (redacted) as a note.
[[nodiscard]] Error hub_error(std::string_view method, std::string_view url, const Response& response,
                              const ErrorContext& context = {});

/// The server's message: X-Error-Message, else the JSON `error` / `error_description` / `errors`,
/// else the body as one line.
[[nodiscard]] std::string server_message(const Response& response);

/// The target of the Link header entry with `rel` ("next" for pagination, "xet-auth" for a Xet
/// file's token route), "" when there is none.
[[nodiscard]] std::string link_with_rel(std::string_view link_header, std::string_view rel);
[[nodiscard]] inline std::string next_link(std::string_view link_header) { return link_with_rel(link_header, "next"); }

/// Follows pagination safely. Protocol when a page repeats a URL already visited, the listing runs
/// past `max_pages`, or its entries past `max_entries`.
class Pages {
 public:
  explicit Pages(std::string first_url, int max_pages = 10000, std::size_t max_entries = 1'000'000)
      : url_(std::move(first_url)), max_pages_(max_pages), max_entries_(max_entries) {}
  [[nodiscard]] const std::string& url() const noexcept { return url_; }
  /// Counts `n` more entries read from the current page.
  [[nodiscard]] Status add_entries(std::size_t n);
  /// Moves to the page the response's Link header names; false at the end.
  [[nodiscard]] Expected<bool> advance(const Response& response);

 private:
  std::string url_;
  int max_pages_;
  std::size_t max_entries_;
  std::size_t entries_ = 0;
  std::unordered_set<std::string> seen_;
};

/// Whether `url` may receive the Hub token: same origin as `endpoint`, or (over the endpoint's own
/// scheme) one of `extra_hosts` (host[:port]). Relative URLs never do.
[[nodiscard]] bool is_hub_host(std::string_view url, std::string_view endpoint,
                               const std::vector<std::string>& extra_hosts = {});

}  // namespace khub::http
