// Discussions and pull requests: POST/GET /api/{type}s/{repo}/discussions[/{num}], and who may
// commit to a pull request. As on the Hub, anyone signed in who can read a repo may open a pull
// request on it and push to the pull requests they opened; other refs need write access.
#include <cctype>

#include "khub/json/fields.h"
#include "routes.h"

namespace khub::localhub {

using nlohmann::json;

namespace {
std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// "12" → 12; 0 for anything but 1-9 digits.
int positive_number(std::string_view text) {
  if (text.empty() || text.size() > 9) return 0;
  int n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

// refs/pr/{num} → num; 0 otherwise.
int pull_request_number(std::string_view rev) {
  return rev.starts_with("refs/pr/") ? positive_number(rev.substr(8)) : 0;
}

json discussion_json(const RepoRecord& repo, const Discussion& d) {
  return {{"num", d.num},
          {"title", d.title},
          {"status", d.status},
          {"isPullRequest", d.is_pull_request},
          {"createdAt", iso_time(d.created_at)},
          {"author", {{"name", d.author}}},
          {"repo", {{"name", repo.key.id()}, {"type", std::string(to_string(repo.key.type))}}},
          {"pinned", false},
          {"numComments", 1},
          {"topReactions", json::array()}};
}
}  // namespace

bool may_commit(const Hub& hub, const Identity& who, const RepoRecord& repo, std::string_view rev, bool create_pr,
                Res& res) {
  if (hub.can_write(who, repo.key.ns)) return true;
  if (who.grant && !who.bad_token) {
    if (create_pr) return true;
    if (int num = pull_request_number(rev); num > 0) {
      auto d = hub.store.find_discussion(repo, num);
      if (d && *d && (*d)->is_pull_request && (*d)->author == who.grant->user) return true;
    }
  }
  return require_write(hub, who, repo.key.ns, res);  // sends the 401/403
}

void post_discussion(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo) return;
  if (!who.grant && !hub.open_mode()) {
    return send_error(res, 401, "Unauthorized", "You must be authenticated to open a discussion");
  }
  auto body = read_body(reader, 1u << 20);
  if (!body) return send_error(res, body.error());
  json j = json_fields::parse_untrusted(*body);
  if (j.is_discarded() || !j.is_object()) return send_error(res, 400, "BadRequest", "request body is not a JSON object");
  if (!check_field_types(j, {{"title", json::value_t::string}, {"description", json::value_t::string},
                             {"pullRequest", json::value_t::boolean}}, res)) {
    return;
  }
  auto title = trimmed(string_field(j, "title"));
  if (title.size() < 3 || title.size() > 200) {
    return send_error(res, 400, "BadRequest", "title must be 3 to 200 characters long, got " +
                                                  std::to_string(title.size()));
  }
  auto description = string_field(j, "description");
  if (description.size() > 65536) return send_error(res, 400, "BadRequest", "description longer than 65536 bytes");
  auto d = hub.store.open_discussion(*repo, title, description, who.grant ? who.grant->user : "khub",
                                     bool_field(j, "pullRequest", false));
  if (!d) return send_error(res, d.error());
  std::string url = base_url(req, hub.port) + "/" + std::string(url_prefix(key.type)) + repo->key.id() +
                    "/discussions/" + std::to_string(d->num);
  json out = discussion_json(*repo, *d);
  out["url"] = url;
  send_json(res, out);
}

void get_discussion(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view num_text) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo) return;
  int num = positive_number(num_text);
  auto d = num > 0 ? hub.store.find_discussion(*repo, num) : Expected<std::optional<Discussion>>(std::nullopt);
  if (!d) return send_error(res, d.error());
  if (!*d) return send_error(res, 404, "NotFound", "Discussion " + std::string(num_text) + " not found");
  const Discussion& disc = **d;
  json out = discussion_json(*repo, disc);
  out["events"] = json::array({{{"id", hub.sign("discussion:" + std::to_string(repo->rowid) + ":" +
                                               std::to_string(disc.num)).substr(0, 24)},
                                {"type", "comment"},
                                {"createdAt", iso_time(disc.created_at)},
                                {"author", {{"name", disc.author}}},
                                {"data", {{"edited", false}, {"hidden", false}, {"latest", {{"raw", disc.description}}}}}}});
  if (disc.is_pull_request) {
    out["changes"] = {{"base", "refs/heads/main"}};
    out["filesWithConflicts"] = json::array();
  }
  if (req.get_param_value("diff") == "1") out["diff"] = "";
  send_json(res, out);
}

void get_discussions(Hub& hub, const Req& req, Res& res, const RepoKey& key) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo) return;
  auto list = hub.store.list_discussions(*repo);
  if (!list) return send_error(res, list.error());
  json items = json::array();
  for (const auto& d : *list) items.push_back(discussion_json(*repo, d));
  send_json(res, {{"discussions", items}, {"count", items.size()}, {"start", 0}, {"numClosedDiscussions", 0}});
}

}  // namespace khub::localhub
