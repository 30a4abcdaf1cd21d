#pragma once
// The Hub HTTP client: repo/revision info, tree listings (paginated), refs, organisation trust,
// resolve HEAD and verified GET. One instance owns one connection pool and may be shared between
// threads. With options().offline every call returns OfflineMiss without any HTTP.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/hub/options.h"
#include "khub/hub/repo.h"

namespace khub::hub {

struct TreeEntry {
  std::string path;        // repo-relative
  bool directory = false;
  std::string oid;         // git blob sha1 (files) or tree id (directories)
  std::uint64_t size = 0;  // real size, LFS included
  std::string lfs_oid;     // sha256 for LFS/Xet files, else empty
  std::string xet_hash;    // the listing's xetHash for files the Hub stores with Xet, else empty
  /// The name the file's blob gets in the cache: sha256 for LFS files, else the git sha1.
  [[nodiscard]] const std::string& etag() const { return lfs_oid.empty() ? oid : lfs_oid; }
};

struct GitRef {
  std::string name;           // v1
  std::string ref;            // refs/heads/v1
  std::string target_commit;  // 40 hex
};

struct RepoRefs {
  std::vector<GitRef> branches;
  std::vector<GitRef> tags;
};

/// What HEAD on a resolve URL tells (docs/protocol.md, Downloads).
struct FileMetadata {
  bool exists = true;       // false: 404 EntryNotFound that named the commit (→ .no_exist)
  std::string commit;       // X-Repo-Commit
  std::string etag;         // normalised X-Linked-Etag / ETag
  std::uint64_t size = 0;
  std::string location;     // where to GET the bytes
  std::string xet_hash;         // X-Xet-Hash: the file is stored with Xet (docs/xet.md "Download")
  std::string xet_token_route;  // absolute URL of its read token (Link rel="xet-auth")
};

class HubClient {
 public:
  explicit HubClient(ClientOptions options);
  ~HubClient();
  HubClient(const HubClient&) = delete;
  HubClient& operator=(const HubClient&) = delete;

  [[nodiscard]] const ClientOptions& options() const noexcept;

  /// GET /api/{type}s/{repo}/revision/{rev} → `sha`. RepoNotFound, RevisionNotFound, Network…
  /// `retry` false: one attempt, for a caller that has the answer cached (huggingface_hub's
  /// "no retry for fast fallback to local cache").
  [[nodiscard]] Expected<std::string> revision_commit(const RepoRef& repo, std::string_view revision,
                                                      bool retry = true);
  /// GET …/tree/{rev}[/{path}][?recursive=true], following `Link: rel="next"` pages.
  /// Entries whose path is unsafe (absolute, '..') fail the call with Protocol.
  [[nodiscard]] Expected<std::vector<TreeEntry>> list_tree(const RepoRef& repo, std::string_view revision,
                                                           std::string_view path = {}, bool recursive = false);
  /// GET …/refs.
  [[nodiscard]] Expected<RepoRefs> list_refs(const RepoRef& repo);
  /// GET /api/organizations/{org}/overview → trustedKernelPublisher; memoised per org.
  [[nodiscard]] Expected<bool> is_trusted_publisher(std::string_view org);
  /// HEAD on the resolve URL, following relative and Hub-host redirects only. `retry` as above.
  [[nodiscard]] Expected<FileMetadata> file_metadata(const RepoRef& repo, std::string_view revision,
                                                     std::string_view path, bool retry = true);
  /// GETs `meta.location` into `dest`, resuming after dropped connections, restarting when Range
  /// is ignored, then checks size and content hash against `meta`. A `dest` that exists already
  /// (a download of the same blob interrupted before) is resumed from its end, its bytes hashed
  /// first. Integrity on mismatch, Network after the retries, Cancelled by the progress sink; dest
  /// is removed on every error.
  [[nodiscard]] Status download(const FileMetadata& meta, const std::filesystem::path& dest,
                                std::string_view display_path);

  /// Number of HTTP exchanges made so far (tests check offline mode makes none).
  [[nodiscard]] std::uint64_t request_count() const noexcept;
  /// A number unique to this client in the process (keys per-client memos).
  [[nodiscard]] std::uint64_t instance_id() const noexcept;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace khub::hub
