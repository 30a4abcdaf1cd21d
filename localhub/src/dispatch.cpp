#include "dispatch.h"

#include <algorithm>

#include "khub/base/text.h"

namespace khub::localhub {

namespace {
std::string join(const std::vector<std::string>& segs, size_t from) {
  std::string out;
  for (size_t i = from; i < segs.size(); ++i) {
    if (i > from) out += '/';
    out += segs[i];
  }
  return out;
}

// /api/{type}s/{ns}/{name}/<rest…>
struct ApiRoute {
  RepoKey key;
  std::vector<std::string> rest;
};

std::optional<ApiRoute> api_route(const std::vector<std::string>& s) {
  if (s.size() < 4 || s[0] != "api") return std::nullopt;
  auto type = repo_type_from_segment(s[1]);
  if (!type) return std::nullopt;
  return ApiRoute{RepoKey{*type, s[2], s[3]}, std::vector<std::string>(s.begin() + 4, s.end())};
}

// [{kernels|datasets|spaces|models}/]{ns}/{name}/<rest…>; `rest` starts at `marker` when present.
std::optional<ApiRoute> web_route(const std::vector<std::string>& s, std::string_view marker) {
  if (s.size() >= 4 && repo_type_from_segment(s[0]) && s[3] == marker) {
    return ApiRoute{RepoKey{*repo_type_from_segment(s[0]), s[1], s[2]}, std::vector<std::string>(s.begin() + 4, s.end())};
  }
  if (s.size() >= 3 && s[2] == marker) {
    return ApiRoute{RepoKey{RepoType::Model, s[0], s[1]}, std::vector<std::string>(s.begin() + 3, s.end())};
  }
  return std::nullopt;
}

// Git LFS endpoints live under "{repo}.git/info/lfs/objects/{batch|verify}".
std::optional<ApiRoute> lfs_route(const std::vector<std::string>& s) {
  auto n = s.size();
  if (n < 6 || s[n - 4] != "info" || s[n - 3] != "lfs" || s[n - 2] != "objects") return std::nullopt;
  std::vector<std::string> head(s.begin(), s.end() - 4);
  if (head.empty() || !head.back().ends_with(".git")) return std::nullopt;
  head.back().resize(head.back().size() - 4);
  if (head.size() == 3 && repo_type_from_segment(head[0])) {
    return ApiRoute{RepoKey{*repo_type_from_segment(head[0]), head[1], head[2]}, {s.back()}};
  }
  if (head.size() == 2) return ApiRoute{RepoKey{RepoType::Model, head[0], head[1]}, {s.back()}};
  return std::nullopt;
}

bool valid_key(const RepoKey& k) { return is_valid_repo_name(k.ns) && is_valid_repo_name(k.name); }

// A repo route whose id has no namespace (`/api/models/gpt2[/…]`, `/gpt2/resolve/…`): the Hub's legacy
// repos; none exist here, and the Hub answers a missing one `RepoNotFound`, which the clients map to
// RepositoryNotFoundError (repo_exists, file_exists, list_repo_commits).
bool namespaceless_repo_route(const std::vector<std::string>& s) {
  static const std::vector<std::string> kApiRest = {"revision", "refs", "tree", "commits", "auth-check", "preupload",
                                                    "commit", "paths-info", "branch", "tag", "settings",
                                                    "xet-read-token", "xet-write-token", "resolve",
                                                    "like", "likers", "discussions", "lfs-files", "super-squash"};
  if (s.size() >= 3 && s[0] == "api" && repo_type_from_segment(s[1]) && is_valid_repo_name(s[2])) {
    return s.size() == 3 || std::find(kApiRest.begin(), kApiRest.end(), s[3]) != kApiRest.end();
  }
  if (s.size() >= 3 && s[1] == "resolve" && is_valid_repo_name(s[0])) return true;
  return s.size() >= 4 && repo_type_from_segment(s[0]) && s[2] == "resolve" && is_valid_repo_name(s[1]);
}

void not_found(Res& res, const Req& req) {
  if (auto route = parse_route(req.target); route && namespaceless_repo_route(route->segs)) {
    return send_error(res, 404, "RepoNotFound", "Repository not found");
  }
  send_error(res, 404, "NotFound", "no route for " + req.method + " " + req.path);
}
}  // namespace

void dispatch_read(Hub& hub, const Req& req, Res& res) {
  auto route = parse_route(req.target);
  if (!route) return send_error(res, 400, "BadRequest", "malformed percent-encoding in the request path");
  const auto& s = route->segs;
  if (s.size() == 2 && s[0] == "api" && s[1] == "whoami-v2") return get_whoami(hub, req, res);
  if (s.size() == 4 && s[0] == "api" && s[1] == "users" && s[3] == "likes") return get_user_likes(hub, req, res, s[2]);
  if (s.size() == 2 && s[0] == "api" && repo_type_from_segment(s[1])) {
    return get_repo_list(hub, req, res, *repo_type_from_segment(s[1]));
  }
  if (s.size() == 4 && s[0] == "api" && s[1] == "organizations" && s[3] == "overview") {
    return get_org_overview(hub, req, res, s[2]);
  }
  // /api/resolve-cache/{type}s/{ns}/{name}/{commit}/{path…}: where resolve_cache_redirects point.
  if (s.size() >= 7 && s[0] == "api" && s[1] == "resolve-cache" && repo_type_from_segment(s[2])) {
    RepoKey key{*repo_type_from_segment(s[2]), s[3], s[4]};
    if (!valid_key(key) || s[5].size() != 40) return send_error(res, 404, "RepoNotFound", "Repository not found");
    return get_resolve(hub, req, res, key, s[5], join(s, 6));
  }
  if (auto a = api_route(s)) {
    if (!valid_key(a->key)) return send_error(res, 404, "RepoNotFound", "Repository not found");
    const auto& r = a->rest;
    if (r.empty()) return get_repo_info(hub, req, res, a->key, "main");
    if (r[0] == "revision" && r.size() >= 2) return get_repo_info(hub, req, res, a->key, join(r, 1));
    if (r[0] == "refs" && r.size() == 1) return get_refs(hub, req, res, a->key);
    if (r[0] == "tree" && r.size() >= 2) return get_tree(hub, req, res, a->key, r[1], join(r, 2));
    if (r[0] == "commits" && r.size() >= 2) return get_commits(hub, req, res, a->key, join(r, 1));
    if (r[0] == "auth-check" && r.size() <= 2 && (r.size() == 1 || r[1] == "write")) {
      return get_auth_check(hub, req, res, a->key, r.size() == 2);
    }
    if ((r[0] == "xet-read-token" || r[0] == "xet-write-token") && r.size() >= 2) {
      return get_xet_token(hub, req, res, a->key, r[0] == "xet-write-token", join(r, 1));
    }
    if (r[0] == "discussions" && r.size() == 1) return get_discussions(hub, req, res, a->key);
    if (r[0] == "discussions" && r.size() == 2) return get_discussion(hub, req, res, a->key, r[1]);
    if (r[0] == "lfs-files" && r.size() == 1) return get_lfs_files(hub, req, res, a->key);
    if (r[0] == "likers" && r.size() == 1) return get_likers(hub, req, res, a->key);
    if (r[0] == "user-access-request" && r.size() == 2) return access_requests_route(hub, req, res, nullptr, a->key, r[1]);
    return not_found(res, req);
  }
  if (s.size() == 2 && s[0] == "lfs-blob") return get_lfs_blob(hub, req, res, s[1]);
  // The Xet CAS. Everything else under /v1 and /v2 (v2 reconstructions, global-dedup chunk
  // queries) is a 404, after which hf_xet uses what is served.
  if (s.size() == 3 && s[0] == "v1" && s[1] == "reconstructions") return get_reconstruction(hub, req, res, s[2]);
  if (s.size() == 3 && s[0] == "v1" && s[1] == "xorb-data") return get_xorb_data(hub, req, res, s[2]);
  if (auto w = web_route(s, "resolve")) {
    if (w->rest.size() < 2) return send_error(res, 404, "EntryNotFound", "Entry not found");
    if (!valid_key(w->key)) return send_error(res, 404, "RepoNotFound", "Repository not found");
    return get_resolve(hub, req, res, w->key, w->rest[0], join(w->rest, 1));
  }
  not_found(res, req);
}

void dispatch_write(Hub& hub, const Req& req, Res& res, const Reader& reader) {
  auto route = parse_route(req.target);
  if (!route) return send_error(res, 400, "BadRequest", "malformed percent-encoding in the request path");
  const auto& s = route->segs;
  const auto& m = req.method;
  if (s.size() == 2 && s[0] == "api" && s[1] == "validate-yaml" && m == "POST") {
    return post_validate_yaml(hub, req, res, reader);
  }
  if (s.size() == 3 && s[0] == "api" && s[1] == "repos") {
    if (s[2] == "create" && m == "POST") return post_create_repo(hub, req, res, reader);
    if (s[2] == "delete" && m == "DELETE") return delete_repo(hub, req, res, reader);
    if (s[2] == "move" && m == "POST") return post_move_repo(hub, req, res, reader);
  }
  if (auto a = api_route(s)) {
    if (!valid_key(a->key)) return send_error(res, 404, "RepoNotFound", "Repository not found");
    const auto& r = a->rest;
    if (r.size() >= 2 && m == "POST") {
      if (r[0] == "preupload") return post_preupload(hub, req, res, reader, a->key, join(r, 1));
      if (r[0] == "commit") return post_commit(hub, req, res, reader, a->key, join(r, 1));
      if (r[0] == "paths-info") return post_paths_info(hub, req, res, reader, a->key, join(r, 1));
      if (r[0] == "branch") return post_ref(hub, req, res, reader, a->key, RefKind::Branch, join(r, 1));
      if (r[0] == "tag") return post_ref(hub, req, res, reader, a->key, RefKind::Tag, join(r, 1));
      if (r[0] == "super-squash") return post_super_squash(hub, req, res, reader, a->key, join(r, 1));
      if (r[0] == "user-access-request" && r.size() == 2) return access_requests_route(hub, req, res, &reader, a->key, r[1]);
      if (r[0] == "discussions" && r.size() >= 3) return post_discussion_change(hub, req, res, reader, a->key, r[1], join(r, 2));
      if (r[0] == "lfs-files" && r.size() == 2 && r[1] == "batch") return post_lfs_files_batch(hub, req, res, reader, a->key);
    }
    if (r.size() == 1 && r[0] == "discussions" && m == "POST") return post_discussion(hub, req, res, reader, a->key);
    if (r.size() == 1 && r[0] == "settings" && m == "PUT") return put_settings(hub, req, res, reader, a->key);
    if (r.size() == 1 && r[0] == "like" && (m == "POST" || m == "DELETE")) return put_like(hub, req, res, a->key, m == "POST");
    if (r.size() >= 2 && m == "DELETE") {
      if (r[0] == "branch") return delete_ref(hub, req, res, a->key, RefKind::Branch, join(r, 1));
      if (r[0] == "tag") return delete_ref(hub, req, res, a->key, RefKind::Tag, join(r, 1));
    }
    return not_found(res, req);
  }
  if (s.size() >= 2 && s[0] == "lfs-upload") {
    if (m == "PUT" && s.size() == 2) return put_lfs_object(hub, req, res, reader, s[1], 0);
    if (m == "PUT" && s.size() == 4 && s[2] == "part") {
      const auto part = parse_decimal_u64(s[3]);
      if (!part || *part < 1 || *part > 100000) return send_error(res, 400, "BadRequest", "bad part number");
      return put_lfs_object(hub, req, res, reader, s[1], static_cast<int>(*part));
    }
    if (m == "POST" && s.size() == 3 && s[2] == "complete") return post_lfs_complete(hub, req, res, reader, s[1]);
    return not_found(res, req);
  }
  if (m == "POST" && !s.empty() && (s[0] == "v1" || s[0] == "v2")) {  // the Xet CAS
    if (s.size() == 4 && s[0] == "v1" && s[1] == "xorbs") return post_xorb(hub, req, res, reader, s[3]);
    if (s.size() == 2 && s[0] == "v1" && s[1] == "shards") return post_shard(hub, req, res, reader);
    if (s.size() == 2 && s[0] == "v1" && s[1] == "telemetry") return post_telemetry(hub, req, res, reader);
    if ((s.size() == 2 && s[0] == "v2" && s[1] == "shards") || (s.size() == 4 && s[0] == "v1" && s[1] == "xorb-grants")) {
      return post_cas_fallback(hub, req, res, reader);
    }
  }
  if (auto l = lfs_route(s); l && m == "POST") {
    if (!valid_key(l->key)) return send_error(res, 404, "RepoNotFound", "Repository not found");
    if (l->rest[0] == "batch") return post_lfs_batch(hub, req, res, reader, l->key);
    if (l->rest[0] == "verify") return post_lfs_verify(hub, req, res, reader, l->key);
  }
  not_found(res, req);
}

}  // namespace khub::localhub
