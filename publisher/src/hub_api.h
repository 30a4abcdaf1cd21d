#pragma once
// The Hub upload endpoints `khub push` calls (hub-protocol.md §7), over an UploadTransport: bearer
// auth on Hub-host requests only, retries with backoff for transient failures (never for the NDJSON
// commit), and status/X-Error-Code → ErrorCode mapping.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "khub/publish/upload_plan.h"
#include "khub/publish/upload_transport.h"

namespace khub::publish::detail {

struct RetryPolicy {
  int max_retries = 5;
  int base_delay_ms = 1000;  // delays 1, 2, 4, 8, 8 × base; 429 waits (t + 1) × base
  std::function<void(const std::string&)> notify;  // one line before each wait (push's progress)
};

struct PreuploadInfo {
  bool lfs = false;
  bool should_ignore = false;
  std::optional<std::string> oid;  // present when the path exists at the revision
};

struct LfsAction {
  std::string oid;
  bool needs_upload = false;  // false: already stored
  std::string upload_href;
  Headers upload_headers;
  std::string verify_href;
  Headers verify_headers;
};

struct CommitOutcome {
  std::string commit_oid;
  std::optional<int> pr_number;
  std::string pr_url;
};

class HubSession {
 public:
  HubSession(UploadTransport& transport, std::string endpoint, std::string token, std::string repo_type,
             std::string repo_id, RetryPolicy retry);

  /// The token's user name, from GET /api/whoami-v2 (the namespace of a bare repo name).
  [[nodiscard]] Expected<std::string> whoami();
  /// POST /api/repos/create; 409 (exists) is success. Forbidden with a hint on 403.
  [[nodiscard]] Status create_repo(bool is_private);
  /// Branch name → head commit, from GET /api/{type}s/{repo}/refs.
  [[nodiscard]] Expected<std::map<std::string, std::string>> branches();
  /// POST …/branch/{branch} with {} (starts at main); 409 is success.
  [[nodiscard]] Status create_branch(const std::string& branch);
  /// DELETE …/branch/{branch}; 404 (already gone) is success.
  [[nodiscard]] Status delete_branch(const std::string& branch);
  /// Files of GET …/tree/{rev}?recursive=true, following `Link: rel="next"`.
  [[nodiscard]] Expected<std::vector<RemoteFile>> list_files(const std::string& revision);
  /// POST …/preupload/{rev}; keyed by path.
  [[nodiscard]] Expected<std::map<std::string, PreuploadInfo>> preupload(const std::string& revision,
                                                                         const std::vector<LocalFile>& files,
                                                                         bool create_pr);
  /// POST {endpoint}/{prefix}{repo}.git/info/lfs/objects/batch for up to 256 objects.
  [[nodiscard]] Expected<std::vector<LfsAction>> lfs_batch(const std::vector<const LocalFile*>& files,
                                                           const std::optional<std::string>& ref);
  /// Uploads one object per its action (basic PUT or multipart parts + completion), then verifies.
  /// Returns the content bytes sent.
  [[nodiscard]] Expected<std::uint64_t> lfs_upload(const LocalFile& file, const LfsAction& action);
  /// POST …/commit/{rev}[?create_pr=1] with an NDJSON body; not retried.
  [[nodiscard]] Expected<CommitOutcome> commit(const std::string& revision, const std::string& ndjson, bool create_pr);

  [[nodiscard]] std::string api_base() const;  // {endpoint}/api/{type}s/{repo}

 private:
  Expected<HttpResponse> call(HttpRequest request, bool hub_auth, bool retry);
  Error http_error(const HttpRequest& request, const HttpResponse& response) const;

  UploadTransport& transport_;
  std::string endpoint_, token_, repo_type_, repo_id_;
  RetryPolicy retry_;
};

/// Percent-encodes every byte except RFC 3986 unreserved characters (`/` too).
[[nodiscard]] std::string encode_segment(std::string_view s);

}  // namespace khub::publish::detail
