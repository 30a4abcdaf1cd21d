#pragma once
// Route handlers, one group per file: routes_repo.cpp (repos, refs, trees, orgs, whoami),
// routes_files.cpp (resolve and blob downloads), routes_upload.cpp (preupload, Git LFS),
// routes_commit.cpp (NDJSON commits), routes_xet_token.cpp and routes_cas.cpp (Xet),
// routes_discussions.cpp (pull requests), routes_rewrite.cpp (moves, super-squash, LFS deletion),
// routes_list.cpp (repo listings), routes_likes.cpp, routes_access.cpp (access requests).
// dispatch.cpp parses the path and calls them.
#include <string>
#include <string_view>

#include "http_util.h"
#include "khub/base/url.h"

namespace khub::localhub {

using Req = httplib::Request;
using Res = httplib::Response;
using Reader = httplib::ContentReader;

// routes_repo.cpp
void get_whoami(Hub& hub, const Req& req, Res& res);
void get_org_overview(Hub& hub, const Req& req, Res& res, std::string_view org);
void get_repo_info(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view rev);
void get_refs(Hub& hub, const Req& req, Res& res, const RepoKey& key);
void get_tree(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view rev, std::string_view path);
void get_commits(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view rev);
void post_paths_info(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key,
                     std::string_view rev);
void put_settings(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key);
void get_auth_check(Hub& hub, const Req& req, Res& res, const RepoKey& key, bool write);
void post_validate_yaml(Hub& hub, const Req& req, Res& res, const Reader& reader);
void post_create_repo(Hub& hub, const Req& req, Res& res, const Reader& reader);
void delete_repo(Hub& hub, const Req& req, Res& res, const Reader& reader);
void post_ref(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key, RefKind kind,
              std::string_view name);
void delete_ref(Hub& hub, const Req& req, Res& res, const RepoKey& key, RefKind kind, std::string_view name);

// routes_files.cpp
void get_resolve(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view rev,
                 std::string_view path);
void get_lfs_blob(Hub& hub, const Req& req, Res& res, std::string_view sha256);
/// Streams bytes [offset, offset + length) of a file as the response body, without loading them.
void stream_file_range(Res& res, const std::filesystem::path& file, std::uint64_t offset, std::uint64_t length,
                       const std::string& content_type);

// routes_upload.cpp
void post_preupload(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key,
                    std::string_view rev);
void post_lfs_batch(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key);
void put_lfs_object(Hub& hub, const Req& req, Res& res, const Reader& reader, std::string_view oid, int part);
void post_lfs_complete(Hub& hub, const Req& req, Res& res, const Reader& reader, std::string_view oid);
void post_lfs_verify(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key);

// routes_xet_token.cpp: GET /api/{type}s/{repo}/xet-{read|write}-token/{rev}
void get_xet_token(Hub& hub, const Req& req, Res& res, const RepoKey& key, bool write, std::string_view revision);

// routes_cas.cpp: the Xet CAS (docs/localhub.md "Xet")
void post_xorb(Hub& hub, const Req& req, Res& res, const Reader& reader, std::string_view xorb);
void post_shard(Hub& hub, const Req& req, Res& res, const Reader& reader);
void get_reconstruction(Hub& hub, const Req& req, Res& res, std::string_view file_id);
void get_xorb_data(Hub& hub, const Req& req, Res& res, std::string_view xorb);
/// POST /v2/shards and /v1/xorb-grants: 404 after the body, so the client falls back to v1.
void post_cas_fallback(Hub& hub, const Req& req, Res& res, const Reader& reader);
void post_telemetry(Hub& hub, const Req& req, Res& res, const Reader& reader);

// routes_access.cpp: …/user-access-request/{status} (GET, reader null) and /{grant|handle} (POST)
void access_requests_route(Hub& hub, const Req& req, Res& res, const Reader* reader, const RepoKey& key,
                           std::string_view action);

// routes_likes.cpp
void put_like(Hub& hub, const Req& req, Res& res, const RepoKey& key, bool liked);
void get_likers(Hub& hub, const Req& req, Res& res, const RepoKey& key);
void get_user_likes(Hub& hub, const Req& req, Res& res, std::string_view user);

// routes_list.cpp: GET /api/{type}s
void get_repo_list(Hub& hub, const Req& req, Res& res, RepoType type);

// routes_discussions.cpp
void post_discussion(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key);
void get_discussion(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view num);
void get_discussions(Hub& hub, const Req& req, Res& res, const RepoKey& key);
/// POST …/discussions/{num}/{comment|title|status|merge|comment/{id}/edit}.
void post_discussion_change(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key,
                            std::string_view num, std::string_view resource);
/// May `who` commit to `rev` of `repo` (or open a pull request with it)? Writers may; anyone signed
/// in who reads the repo may open a pull request and push to the ones they opened. Sends the 401/403
/// and returns false otherwise.
bool may_commit(const Hub& hub, const Identity& who, const RepoRecord& repo, std::string_view rev, bool create_pr,
                Res& res);

// routes_rewrite.cpp
void post_move_repo(Hub& hub, const Req& req, Res& res, const Reader& reader);
void post_super_squash(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key,
                       std::string_view rev);
void get_lfs_files(Hub& hub, const Req& req, Res& res, const RepoKey& key);
void post_lfs_files_batch(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key);
/// find_readable_repo, except that the old id of a moved repo the caller may read answers 307 to the
/// same URL under its new id (as the Hub does after a rename).
std::optional<RepoRecord> find_readable_repo_following_moves(Hub& hub, const Identity& who, const RepoKey& key,
                                                             const Req& req, Res& res);

// routes_commit.cpp
void post_commit(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key, std::string_view rev);

/// "2026-11-30T08:00:00.000Z".
[[nodiscard]] std::string iso_time(std::int64_t unix_seconds);

}  // namespace khub::localhub
