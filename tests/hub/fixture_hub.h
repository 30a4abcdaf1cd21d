#pragma once
// A small Hub-compatible server for tests, on 127.0.0.1 port 0, with a second "CDN" server on
// localhost (another host for the client) that serves LFS blobs. It speaks the subset of
// docs/protocol.md the client uses, and can inject faults: error statuses, 429s, dropped
// connections, ignored ranges, corrupted bytes, garbage JSON, escaping tree paths, pagination.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace khub::test {

struct FixtureFile {
  std::string content;
  bool lfs = false;
  bool xet = false;  // an LFS file the Hub also stores with Xet: its HEAD names a Xet hash and a token
                     // route, the "cdn" server is also its CAS (reconstructions, xorb range reads)
};

struct Faults {
  std::string match;          // faults apply to request paths containing this ("" = all)
  int fail_count = 0;         // next N matching requests answer fail_status
  int fail_status = 503;
  std::string rate_limit;     // RateLimit header sent with a 429 fail_status
  std::string retry_after;    // Retry-After header sent with a 429 fail_status
  int drop_count = 0;         // next N matching body GETs drop the connection after drop_after bytes
  std::size_t drop_after = 0;
  bool ignore_range = false;  // answer 200 + full body to Range requests
  bool corrupt = false;       // flip the first byte of served file bodies
  bool garbage_json = false;  // API answers are not JSON
  bool escape_path = false;   // tree listings contain "../escape"
  int page_size = 0;          // > 0: tree listings paginate with Link headers
  std::string etag;           // non-empty: regular files' HEAD/GET answer this ETag
  std::string lfs_location;   // non-empty: LFS resolves redirect here instead of to the CDN
  std::string cdn_location;   // non-empty: matching CDN GETs answer 302 to here
  std::string repo_commit;    // non-empty: resolves answer this X-Repo-Commit

  // Stage targeting (the download fault matrix, docs/security.md): narrows which requests `match`
  // selects, for the status and drop faults above and the answer faults below.
  std::string method;               // non-empty: only requests with this method ("HEAD", "GET")
  std::string skip;                 // non-empty: requests whose path contains this are exempt
  bool ranged_only = false;         // only requests that carry a Range header (a resume)
  std::size_t prime_drop_after = 0;  // > 0: every file GET without a Range (/resolve/, /blobs/; not /api/)
                                     // drops after this many bytes, whatever `match` says: forces a resume

  // Answer faults: each applies to the first `times` matching answers (-1: all of them). A file body,
  // an API answer (JSON), a HEAD (its headers) and the Hub's 302 to the CDN all count as answers.
  int times = -1;
  bool drop = false;          // the connection closes half-way through the body; a HEAD gets no answer at all
  bool wrong_bytes = false;   // the body's first byte is flipped; a HEAD's ETag / X-Linked-Etag names another hash
  std::size_t short_body = 0;  // > 0: Content-Length says N, N - short_body bytes are sent, then the connection
                               // closes; a HEAD announces a size short_body bytes smaller than the file
  std::size_t long_body = 0;   // > 0: the body carries this many bytes more than the file (Content-Length counts
                               // them, so it is longer than HEAD said); a HEAD announces that many bytes more
  int slow_ms = 0;             // > 0: the body stalls this long half-way through; a HEAD waits this long to answer
};

struct RequestRecord {
  std::string server;  // "hub" or "cdn"
  std::string method;
  std::string path;    // with query
  std::string authorization;
  std::string range;
  std::string user_agent;
};

class FixtureHub {
 public:
  FixtureHub();
  ~FixtureHub();
  FixtureHub(const FixtureHub&) = delete;
  FixtureHub& operator=(const FixtureHub&) = delete;

  [[nodiscard]] std::string endpoint() const;  // http://127.0.0.1:<port>
  [[nodiscard]] std::string cdn_host() const;  // localhost:<port>

  /// Commits `files` as the whole content of `branch` of repo `id` ("kernel" or "model" type);
  /// returns the new 40-hex commit id. Branch "main" is created on first use.
  std::string commit(const std::string& id, const std::string& branch, std::map<std::string, FixtureFile> files,
                     const std::string& type = "kernel");
  void set_trusted(const std::string& org, bool trusted);
  void set_gated(const std::string& id, bool gated);
  /// Makes the refs listing claim `target` as the commit of `branch` (a hostile server).
  void set_ref_target(const std::string& id, const std::string& branch, const std::string& target);
  /// Requests for any repo then need `Authorization: Bearer <token>` (401 otherwise).
  void require_token(const std::string& token);

  void set_faults(const Faults& faults);
  [[nodiscard]] std::vector<RequestRecord> requests() const;
  void clear_requests();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace khub::test
