#pragma once
// The Hub upload endpoints `khub push` calls, over the shared transport (khub::http): bearer auth on
// Hub-host requests only, the shared retry schedule for transient failures (never for the NDJSON
// commit), and the shared error mapping (docs/protocol.md).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "khub/publish/upload_plan.h"
#include "khub/base/repo_type.h"
#include "khub/http/retry.h"
#include "khub/http/transport.h"
#include "khub/xet/connection.h"

namespace khub::publish::detail {

struct PreuploadInfo {
  bool lfs = false;
  bool should_ignore = false;
  std::optional<std::string> oid;  // present when the path exists at the revision
};

struct LfsAction {
  std::string oid;
  bool needs_upload = false;  // false: already stored
  std::string upload_href;
  http::Headers upload_headers;
  std::string verify_href;
  http::Headers verify_headers;
};

struct CommitOutcome {
  std::string commit_oid;
  std::optional<int> pr_number;
  std::string pr_url;
};

class HubSession {
 public:
  HubSession(http::Transport& transport, std::string endpoint, std::string token, RepoType repo_type,
             std::string repo_id, http::RetryPolicy retry, http::RetryNotice notice);

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
  /// GET …/xet-write-token/{rev}[?create_pr=1]: the CAS and a token for it when the Hub offers Xet
  /// uploads, nothing when it does not (any answer but 200: the push uses LFS).
  [[nodiscard]] Expected<std::optional<xet::CasConnection>> xet_write_token(const std::string& revision, bool create_pr);
  /// POST …/commit/{rev}[?create_pr=1] with an NDJSON body; not retried.
  [[nodiscard]] Expected<CommitOutcome> commit(const std::string& revision, const std::string& ndjson, bool create_pr);

  [[nodiscard]] std::string api_base() const;  // {endpoint}/api/{type}s/{repo}

 private:
  Expected<http::Response> call(http::Request request, bool retry);
  Error http_error(const http::Request& request, const http::Response& response) const;

  http::Transport& transport_;
  std::string endpoint_, token_;
  RepoType repo_type_;
  std::string repo_id_;
  http::RetryPolicy retry_;
  http::RetryNotice notice_;
};

/// Percent-encodes every byte except RFC 3986 unreserved characters (`/` too).
[[nodiscard]] std::string encode_segment(std::string_view s);

}  // namespace khub::publish::detail
