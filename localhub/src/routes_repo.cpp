// Repos, refs, trees, commits, organisations and whoami.
#include <algorithm>
#include <ctime>
#include <map>

#include "khub/base/redact.h"
#include "khub/json/fields.h"
#include "card_metadata.h"
#include "routes.h"
#include "tree_hash.h"

namespace khub::localhub {

using nlohmann::json;

std::string iso_time(std::int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
  return buf;
}

namespace {
json file_json(const FileEntry& f) {
  json j{{"type", "file"}, {"oid", f.git_oid}, {"size", f.size}, {"path", f.path}};
  if (f.lfs) {
    j["lfs"] = {{"oid", f.sha256}, {"size", f.size}, {"pointerSize", lfs_pointer(f.sha256, f.size).size()}};
  }
  if (!f.xet_hash.empty()) j["xetHash"] = f.xet_hash;  // snapshot_download then skips the HEAD
  return j;
}

std::string parent_dir(std::string_view p) {
  auto s = p.rfind('/');
  return s == std::string_view::npos ? std::string() : std::string(p.substr(0, s));
}

// Reads a JSON object body (at most kJsonBodyLimit); sends 400/413 and returns nullopt when it is
// not one. Callers check the caller's rights first: a refused request's body is never read.
constexpr std::uint64_t kJsonBodyLimit = 1u << 20;
std::optional<json> json_body(const Hub& hub, const Reader& reader, Res& res) {
  auto body = read_body(reader, kJsonBodyLimit);
  if (!body) {
    send_error(res, body.error());
    return std::nullopt;
  }
  if (body->empty()) return json::object();
  json j = json_fields::parse_untrusted(*body);
  if (j.is_discarded() || !j.is_object()) {
    send_error(res, 400, "BadRequest", "request body is not a JSON object");
    return std::nullopt;
  }
  (void)hub;
  return j;
}

struct Resolved {
  RepoRecord repo;
  std::string commit;
};

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

bool param_true(std::string_view v) { return v == "true" || v == "True" || v == "1"; }

// expand=true: each path's lastCommit, the newest commit from `commit` back whose tree changed the
// path's oid (file or folder). Walks the history only as far as the oldest answer needs.
Expected<std::map<std::string, json>> last_commits(Hub& hub, const RepoRecord& repo, const std::string& commit,
                                                    std::vector<std::string> paths) {
  KHUB_TRY(auto history, hub.store.history(repo, commit));
  auto oids_at = [&](const CommitRecord& c) -> Expected<std::map<std::string, std::string>> {
    KHUB_TRY(auto files, hub.store.list_files(repo, c.oid));
    auto oids = directory_oids(files);
    for (const auto& f : files) oids[f.path] = f.git_oid;
    return oids;
  };
  std::map<std::string, json> out;
  if (history.empty()) return out;
  KHUB_TRY(auto newer, oids_at(history[0]));
  for (std::size_t i = 0; i < history.size() && !paths.empty(); ++i) {
    std::map<std::string, std::string> older;
    if (i + 1 < history.size()) {
      KHUB_TRY(older, oids_at(history[i + 1]));
    }
    std::erase_if(paths, [&](const std::string& p) {
      auto now = newer.find(p), before = older.find(p);
      if (before != older.end() && now != newer.end() && before->second == now->second) return false;
      const auto& c = history[i];
      out[p] = {{"id", c.oid}, {"title", c.summary}, {"date", iso_time(c.created_at)}};
      return true;
    });
    newer = std::move(older);
  }
  return out;
}

// Adds lastCommit to each entry of `entries` (objects with "path").
Status add_last_commits(Hub& hub, const Resolved& r, json& entries) {
  std::vector<std::string> paths;
  for (const auto& e : entries) paths.push_back(e["path"].get<std::string>());
  KHUB_TRY(auto last, last_commits(hub, r.repo, r.commit, std::move(paths)));
  for (auto& e : entries)
    if (auto it = last.find(e["path"].get<std::string>()); it != last.end()) e["lastCommit"] = it->second;
  return {};
}

std::optional<Resolved> resolve(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view rev) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo_following_moves(hub, who, key, req, res);
  if (!repo) return std::nullopt;
  auto commit = hub.store.resolve_revision(*repo, rev.empty() ? "main" : rev);
  if (!commit) {
    send_error(res, commit.error());
    return std::nullopt;
  }
  return Resolved{*repo, *commit};
}
}  // namespace

void get_whoami(Hub& hub, const Req& req, Res& res) {
  auto who = hub.identify(req);
  if (!who.grant) return send_error(res, 401, "Unauthorized", "Invalid user token.");
  const auto& g = *who.grant;
  json orgs = json::array();
  for (const auto& o : g.orgs) {
    const auto* profile = hub.config.find_organization(o);
    orgs.push_back({{"type", "org"}, {"name", o}, {"fullname", profile && !profile->fullname.empty() ? profile->fullname : o},
                    {"roleInOrg", "write"}});
  }
  send_json(res, {{"type", "user"},
                  {"id", hub.sign("user:" + g.user).substr(0, 24)},
                  {"name", g.user},
                  {"fullname", g.fullname.empty() ? g.user : g.fullname},
                  {"orgs", orgs},
                  {"auth",
                   {{"type", "access_token"},
                    {"accessToken", {{"displayName", "khub"}, {"role", g.write ? "write" : "read"}}}}}});
}

void get_org_overview(Hub& hub, const Req& /*req*/, Res& res, std::string_view org) {
  const auto& c = hub.config;
  bool trusted = std::find(c.trusted_orgs.begin(), c.trusted_orgs.end(), org) != c.trusted_orgs.end();
  bool is_user = std::any_of(c.tokens.begin(), c.tokens.end(), [&](const auto& g) { return g.user == org; });
  if (is_user && !trusted) return send_error(res, 404, "NotFound", "Organization not found");
  const auto* profile = c.find_organization(org);
  send_json(res, {{"name", org}, {"fullname", profile && !profile->fullname.empty() ? profile->fullname : std::string(org)},
                  {"avatarUrl", ""}, {"type", "org"},
                  {"trustedKernelPublisher", trusted}});
}

void get_repo_info(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view rev) {
  auto r = resolve(hub, req, res, key, rev);
  if (!r) return;
  auto info = hub.store.commit_info(r->repo, r->commit);
  auto files = hub.store.list_files(r->repo, r->commit);
  if (!info) return send_error(res, info.error());
  if (!files) return send_error(res, files.error());
  bool blobs = req.get_param_value("blobs") == "true" || req.get_param_value("blobs") == "1";
  json siblings = json::array();
  json names = json::array();
  for (const auto& f : *files) {
    json s{{"rfilename", f.path}};
    if (blobs) {
      s["size"] = f.size;
      s["blobId"] = f.git_oid;
      if (f.lfs) s["lfs"] = {{"size", f.size}, {"sha256", f.sha256}, {"pointerSize", lfs_pointer(f.sha256, f.size).size()}};
    }
    siblings.push_back(std::move(s));
    names.push_back(f.path);
  }
  const auto& c = hub.config;
  auto likers = hub.store.likers(r->repo);
  const auto who = hub.identify(req);
  const bool liked = likers && who.grant && std::find(likers->begin(), likers->end(), who.grant->user) != likers->end();
  json j{{"_id", hub.sign("repo:" + std::to_string(r->repo.rowid)).substr(0, 24)},
         {"id", r->repo.key.id()},  // the stored spelling: names are case-insensitive
         {"author", r->repo.key.ns},
         {"sha", r->commit},
         {"private", r->repo.is_private},
         {"gated", r->repo.gated.empty() ? json(false) : json(r->repo.gated)},
         {"disabled", false},
         {"downloads", 0},
         {"likes", likers ? likers->size() : 0},
         {"isLikedByUser", liked},
         {"tags", json::array()},
         {"createdAt", iso_time(r->repo.created_at)},
         {"lastModified", iso_time(info->created_at)}};
  if (key.type == RepoType::Kernel) {
    j["repoType"] = "kernel";
    j["files"] = names;
    j["trustedPublisher"] = std::find(c.trusted_orgs.begin(), c.trusted_orgs.end(), key.ns) != c.trusted_orgs.end();
  } else {
    j["siblings"] = siblings;
  }
  send_json(res, j);
}

void get_refs(Hub& hub, const Req& req, Res& res, const RepoKey& key) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo) return;
  auto refs = hub.store.list_refs(*repo);
  if (!refs) return send_error(res, refs.error());
  json branches = json::array(), tags = json::array(), prs = json::array();
  for (const auto& r : *refs) {
    switch (r.kind) {
      case RefKind::Branch: branches.push_back({{"name", r.name}, {"ref", "refs/heads/" + r.name}, {"targetCommit", r.commit}}); break;
      case RefKind::Tag: tags.push_back({{"name", r.name}, {"ref", "refs/tags/" + r.name}, {"targetCommit", r.commit}}); break;
      case RefKind::PullRequest: prs.push_back({{"name", r.name}, {"ref", "refs/pr/" + r.name}, {"targetCommit", r.commit}}); break;
    }
  }
  json j{{"branches", branches}, {"tags", tags}, {"converts", json::array()}};
  auto inc = req.get_param_value("include_prs");
  if (inc == "1" || inc == "true") j["pullRequests"] = prs;
  send_json(res, j);
}

void get_tree(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view rev, std::string_view raw_path) {
  auto r = resolve(hub, req, res, key, rev);
  if (!r) return;
  auto files = hub.store.list_files(r->repo, r->commit);
  if (!files) return send_error(res, files.error());
  std::string path(raw_path);
  while (!path.empty() && path.back() == '/') path.pop_back();
  auto dirs = directory_oids(*files);
  if (!path.empty() && !dirs.count(path)) {
    return send_error(res, 404, "EntryNotFound", "Entry not found: " + path);
  }
  bool recursive = param_true(req.get_param_value("recursive"));
  auto under = [&](const std::string& p) { return path.empty() || p.starts_with(path + "/"); };
  std::map<std::string, json> entries;
  for (const auto& [d, oid] : dirs) {
    if (d.empty() || !under(d) || (!recursive && parent_dir(d) != path)) continue;
    entries.emplace(d, json{{"type", "directory"}, {"oid", oid}, {"size", 0}, {"path", d}});
  }
  for (const auto& f : *files) {
    if (!under(f.path) || (!recursive && parent_dir(f.path) != path)) continue;
    entries.emplace(f.path, file_json(f));
  }
  auto limit_param = count_param(req, res, "limit", 1000, 1, 10000);
  auto cursor_param = count_param(req, res, "cursor", 0, 0, SIZE_MAX);
  if (!limit_param || !cursor_param) return;
  const std::size_t limit = *limit_param, cursor = *cursor_param;
  json page = json::array();
  std::size_t i = 0;
  for (auto& [p, e] : entries) {
    if (i >= cursor && page.size() < limit) page.push_back(std::move(e));
    ++i;
  }
  if (cursor + limit < entries.size()) {
    std::string next = base_url(req, hub.port) + "/api/" + std::string(api_segment(key.type)) + "/" + key.id() +
                       "/tree/" + url_encode(rev.empty() ? "main" : rev, false) +
                       (path.empty() ? "" : "/" + url_encode(path, true)) + "?recursive=" +
                       (recursive ? "true" : "false") + "&limit=" + std::to_string(limit) +
                       "&cursor=" + std::to_string(cursor + limit);
    res.set_header("Link", "<" + next + ">; rel=\"next\"");
  }
  if (param_true(req.get_param_value("expand")))
    if (auto st = add_last_commits(hub, *r, page); !st) return send_error(res, st.error());
  send_json(res, page);
}

void get_commits(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view rev) {
  auto r = resolve(hub, req, res, key, rev);
  if (!r) return;
  auto list = hub.store.history(r->repo, r->commit);
  if (!list) return send_error(res, list.error());
  auto limit = count_param(req, res, "limit", 50, 1, 1000);  // the Hub's page: p=0, 1, … of `limit`
  auto page = count_param(req, res, "p", 0, 0, SIZE_MAX / 1000);
  if (!limit || !page) return;
  bool formatted = false;  // expand[]=formatted: the title and message as HTML (escaped text here)
  for (auto [it, end] = req.params.equal_range("expand[]"); it != end; ++it) formatted |= it->second == "formatted";
  json out = json::array();
  for (std::size_t i = *page * *limit; i < list->size() && out.size() < *limit; ++i) {
    const auto& c = (*list)[i];
    out.push_back({{"id", c.oid}, {"title", c.summary}, {"message", c.description},
                   {"authors", json::array({{{"user", c.author}}})}, {"date", iso_time(c.created_at)}});
    if (formatted) out.back()["formatted"] = {{"title", html_escape(c.summary)}, {"message", html_escape(c.description)}};
  }
  if ((*page + 1) * *limit < list->size()) {
    std::string next = base_url(req, hub.port) + "/api/" + std::string(api_segment(key.type)) + "/" + key.id() +
                       "/commits/" + url_encode(rev.empty() ? "main" : rev, false) +
                       "?p=" + std::to_string(*page + 1) + "&limit=" + std::to_string(*limit) +
                       (formatted ? "&expand%5B%5D=formatted" : "");
    res.set_header("Link", "<" + next + ">; rel=\"next\"");
  }
  res.set_header("X-Total-Count", std::to_string(list->size()));
  send_json(res, out);
}

void post_paths_info(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key,
                     std::string_view rev) {
  auto r = resolve(hub, req, res, key, rev);  // who may read it, before the body
  if (!r) return;
  auto body = read_body(reader, 2u << 20);
  if (!body) return send_error(res, body.error());
  std::vector<std::string> paths;
  bool expand = false;
  json j = json_fields::parse_untrusted(*body);
  if (!j.is_discarded() && j.is_object() &&
      !check_field_types(j, {{"paths", json::value_t::array}, {"expand", json::value_t::boolean}}, res)) {
    return;
  }
  if (!j.is_discarded() && j.is_object() && j.contains("paths") && j["paths"].is_array()) {
    for (const auto& p : j["paths"]) {
      if (p.is_string()) paths.push_back(p.get<std::string>());
    }
    expand = bool_field(j, "expand", false);
  } else {  // form-encoded: paths=a&paths=b&expand=True
    httplib::Params params;
    httplib::detail::parse_query_text(*body, params);
    for (auto [it, end] = params.equal_range("paths"); it != end; ++it) paths.push_back(it->second);
    if (auto it = params.find("expand"); it != params.end()) expand = param_true(it->second);
  }
  auto files = hub.store.list_files(r->repo, r->commit);
  if (!files) return send_error(res, files.error());
  auto dirs = directory_oids(*files);
  json out = json::array();
  for (auto p : paths) {
    while (!p.empty() && p.back() == '/') p.pop_back();
    auto it = std::lower_bound(files->begin(), files->end(), p, [](const FileEntry& f, const std::string& s) { return f.path < s; });
    if (it != files->end() && it->path == p) {
      out.push_back(file_json(*it));
    } else if (!p.empty() && dirs.count(p)) {
      out.push_back({{"type", "directory"}, {"oid", dirs[p]}, {"size", 0}, {"path", p}});
    }
  }
  if (expand)
    if (auto st = add_last_commits(hub, *r, out); !st) return send_error(res, st.error());
  send_json(res, out);
}

void put_settings(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key) {
  using T = json::value_t;
  auto who = hub.identify(req);
  if (!find_readable_repo(hub, who, key, res) || !require_write(hub, who, key.ns, res)) return;
  auto j = json_body(hub, reader, res);
  if (!j || !check_field_types(*j, {{"private", T::boolean}, {"visibility", T::string}}, res)) return;
  std::optional<bool> is_private;
  if (j->contains("private") && (*j)["private"].is_boolean()) is_private = (*j)["private"].get<bool>();
  if (j->contains("visibility")) {
    auto v = string_field(*j, "visibility");
    if (v != "public" && v != "private") return send_error(res, 400, "BadRequest", "visibility must be public or private");
    is_private = v == "private";
  }
  if (j->contains("gated")) {
    const auto& g = (*j)["gated"];
    if (!(g == false || g == "auto" || g == "manual")) return send_error(res, 400, "BadRequest", "gated must be false, \"auto\" or \"manual\"");
    if (auto st = hub.store.set_gated(key, g == false ? std::string() : g.get<std::string>()); !st) {
      return send_error(res, st.error());
    }
  }
  if (is_private) {
    if (auto st = hub.store.set_private(key, *is_private); !st) return send_error(res, st.error());
  }
  send_json(res, json::object());
}

void get_auth_check(Hub& hub, const Req& req, Res& res, const RepoKey& key, bool write) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo) return;
  if (write && !require_write(hub, who, key.ns, res)) return;
  if (!check_gate(hub, who, *repo, res)) return;  // as the Hub: a gated repo's files need access
  send_json(res, json::object());
}

void post_validate_yaml(Hub& hub, const Req& req, Res& res, const Reader& reader) {
  if (hub.identify(req).bad_token) return send_error(res, 401, "Unauthorized", "Invalid credentials in Authorization header");
  auto j = json_body(hub, reader, res);
  if (!j || !check_field_types(*j, {{"content", json::value_t::string}, {"repoType", json::value_t::string}}, res)) return;
  auto check = check_card_metadata(string_field(*j, "content"));
  json errors = json::array(), warnings = json::array();
  for (const auto& e : check.errors) errors.push_back({{"message", e}});
  for (const auto& w : check.warnings) warnings.push_back({{"message", w}});
  if (!check.errors.empty()) {
    res.set_header("X-Error-Code", "BadRequest");
    res.set_header("X-Error-Message", one_printable_line(check.errors.front(), 300));
  }
  send_json(res, {{"errors", errors}, {"warnings", warnings}}, errors.empty() ? 200 : 400);
}

void post_create_repo(Hub& hub, const Req& req, Res& res, const Reader& reader) {
  using T = json::value_t;
  auto who = hub.identify(req);
  if (!require_some_write(hub, who, res)) return;  // the namespace is in the body: checked again below
  auto j = json_body(hub, reader, res);
  if (!j || !check_field_types(*j, {{"name", T::string}, {"organization", T::string}, {"type", T::string},
                                    {"private", T::boolean}, {"visibility", T::string}}, res)) {
    return;
  }
  auto str = [&](const char* k) { return (*j).contains(k) && (*j)[k].is_string() ? (*j)[k].get<std::string>() : std::string(); };
  RepoKey key;
  key.name = str("name");
  key.ns = str("organization");
  if (key.ns.empty()) key.ns = who.grant ? who.grant->user : "khub";
  auto type = repo_type_from_name(str("type").empty() ? "model" : str("type"));
  if (!type) return send_error(res, 400, "BadRequest", "unknown repo type '" + str("type") + "'");
  key.type = *type;
  if (!is_valid_repo_name(key.name) || !is_valid_repo_name(key.ns)) {
    return send_error(res, 400, "BadRequest", "invalid repo id '" + key.id() + "'");
  }
  if (j->contains("private") && j->contains("visibility")) {
    return send_error(res, 400, "BadRequest", "pass either private or visibility, not both");
  }
  bool is_private = j->contains("private") && (*j)["private"].is_boolean() && (*j)["private"].get<bool>();
  auto given = [&](const char* k) { return j->contains(k) && !(*j)[k].is_null(); };
  if (!given("private") && !given("visibility")) {  // the organisation's default (Enterprise Hub)
    const auto* org = hub.config.find_organization(key.ns);
    is_private = org && org->private_by_default;
  }
  if (auto v = str("visibility"); !v.empty()) {
    if (v != "public" && v != "private") return send_error(res, 400, "BadRequest", "visibility must be public or private");
    is_private = v == "private";
  }
  if (!require_write(hub, who, key.ns, res)) return;
  std::string url = base_url(req, hub.port) + "/" + std::string(url_prefix(key.type)) + key.id();
  auto rec = hub.store.create_repo(key, is_private, who.grant ? who.grant->user : "khub");
  if (!rec) {
    if (rec.error().code == ErrorCode::Conflict) {
      res.set_header("X-Error-Code", "RepoExists");
      res.set_header("X-Error-Message", one_printable_line(rec.error().message, 300));
      return send_json(res, {{"error", rec.error().message}, {"url", url}}, 409);
    }
    return send_error(res, rec.error());
  }
  send_json(res, {{"url", url}, {"name", key.id()}, {"id", hub.sign("repo:" + std::to_string(rec->rowid)).substr(0, 24)}});
}

void delete_repo(Hub& hub, const Req& req, Res& res, const Reader& reader) {
  using T = json::value_t;
  auto who = hub.identify(req);
  if (!require_some_write(hub, who, res)) return;
  auto j = json_body(hub, reader, res);
  if (!j || !check_field_types(*j, {{"name", T::string}, {"organization", T::string}, {"type", T::string}}, res)) {
    return;
  }
  RepoKey key;
  key.name = string_field(*j, "name");
  key.ns = j->contains("organization") && (*j)["organization"].is_string() ? (*j)["organization"].get<std::string>()
                                                                         : (who.grant ? who.grant->user : "khub");
  auto type = repo_type_from_name(string_field(*j, "type", "model"));
  if (!type) return send_error(res, 400, "BadRequest", "unknown repo type");
  key.type = *type;
  if (!require_write(hub, who, key.ns, res)) return;
  if (auto st = hub.store.delete_repo(key); !st) return send_error(res, st.error());
  send_json(res, json::object());
}

void post_ref(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key, RefKind kind,
              std::string_view name) {
  using T = json::value_t;
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo || !require_write(hub, who, key.ns, res)) return;
  auto j = json_body(hub, reader, res);
  if (!j || !check_field_types(*j, {{"startingPoint", T::string}, {"tag", T::string}, {"overwrite", T::boolean}}, res)) {
    return;
  }
  // Branch: POST …/branch/{name} {"startingPoint"?}; tag: POST …/tag/{revision} {"tag"}.
  std::string ref_name(name), start = "main";
  if (kind == RefKind::Tag) {
    start = std::string(name);
    ref_name = string_field(*j, "tag");
  } else if (j->contains("startingPoint") && (*j)["startingPoint"].is_string()) {
    start = (*j)["startingPoint"].get<std::string>();
  }
  auto commit = hub.store.resolve_revision(*repo, start);  // first, as the Hub: RevisionNotFound wins
  if (!commit) return send_error(res, commit.error());
  if (!is_valid_ref_name(ref_name)) return send_error(res, 400, "BadRequest", "invalid reference name '" + ref_name + "'");
  bool overwrite = bool_field(*j, "overwrite", false);
  if (auto st = hub.store.create_ref(*repo, kind, ref_name, *commit, overwrite); !st) return send_error(res, st.error());
  send_json(res, json::object());
}

void delete_ref(Hub& hub, const Req& req, Res& res, const RepoKey& key, RefKind kind, std::string_view name) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo || !require_write(hub, who, key.ns, res)) return;
  if (auto st = hub.store.delete_ref(*repo, kind, name); !st) return send_error(res, st.error());
  send_json(res, json::object());
}

}  // namespace khub::localhub
