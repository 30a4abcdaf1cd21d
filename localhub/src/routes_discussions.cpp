// Discussions and pull requests: POST/GET /api/{type}s/{repo}/discussions[/{num}], comments,
// title and status changes, merges, and who may commit to a pull request. As on the Hub, anyone signed in who can read a repo may open a pull
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

std::string event_id(const Hub& hub, const RepoRecord& repo, int num, int seq) {
  return hub.sign("event:" + std::to_string(repo.rowid) + ":" + std::to_string(num) + ":" + std::to_string(seq)).substr(0, 24);
}

json event_json(const Hub& hub, const RepoRecord& repo, int num, const DiscussionEvent& e) {
  json data;
  if (e.type == "comment") {
    data = {{"edited", e.edited}, {"hidden", false}, {"numEdits", e.edited ? 1 : 0}, {"latest", {{"raw", e.data}}}};
  } else if (e.type == "status-change") {
    data = {{"status", e.data}};
  } else if (e.type == "title-change") {
    auto nl = e.data.find('\n');
    data = {{"from", e.data.substr(0, nl)}, {"to", nl == std::string::npos ? std::string() : e.data.substr(nl + 1)}};
  }
  return {{"id", event_id(hub, repo, num, e.seq)}, {"type", e.type}, {"createdAt", iso_time(e.created_at)},
          {"author", {{"name", e.author}}}, {"data", data}};
}

// The discussion named by a path segment; nullopt after a 404 (or the store's error).
std::optional<Discussion> find_numbered(Hub& hub, const RepoRecord& repo, std::string_view num_text, Res& res) {
  int num = positive_number(num_text);
  auto d = num > 0 ? hub.store.find_discussion(repo, num) : Expected<std::optional<Discussion>>(std::nullopt);
  if (!d) {
    send_error(res, d.error());
    return std::nullopt;
  }
  if (!*d) send_error(res, 404, "NotFound", "Discussion " + std::string(num_text) + " not found");
  return *d;
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
  auto d = find_numbered(hub, *repo, num_text, res);
  if (!d) return;
  auto events = hub.store.discussion_events(*repo, d->num);
  if (!events) return send_error(res, events.error());
  json out = discussion_json(*repo, *d);
  out["events"] = json::array();
  for (const auto& e : *events) out["events"].push_back(event_json(hub, *repo, d->num, e));
  if (d->is_pull_request) {
    out["changes"] = {{"base", "refs/heads/main"}};
    if (!d->merge_commit.empty()) out["changes"]["mergeCommitId"] = d->merge_commit;
    out["filesWithConflicts"] = json::array();
  }
  if (req.get_param_value("diff") == "1") out["diff"] = "";
  send_json(res, out);
}

void get_discussions(Hub& hub, const Req& req, Res& res, const RepoKey& key) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo) return;
  const auto type = req.get_param_value("type"), status = req.get_param_value("status");
  const auto author = req.get_param_value("author");
  if (!type.empty() && type != "all" && type != "discussion" && type != "pull_request") {
    return send_error(res, 400, "BadRequest", "type must be all, discussion or pull_request");
  }
  if (!status.empty() && status != "all" && status != "open" && status != "closed") {
    return send_error(res, 400, "BadRequest", "status must be all, open or closed");
  }
  auto page = count_param(req, res, "p", 0, 0, 1u << 20);
  if (!page) return;
  auto list = hub.store.list_discussions(*repo);
  if (!list) return send_error(res, list.error());
  constexpr std::size_t kPage = 50;
  json items = json::array();
  std::size_t count = 0;
  for (const auto& d : *list) {
    if ((type == "discussion" && d.is_pull_request) || (type == "pull_request" && !d.is_pull_request)) continue;
    const bool open = d.status == "open" || d.status == "draft";  // "open" lists drafts too, as the Hub
    if ((status == "open" && !open) || (status == "closed" && open)) continue;
    if (!author.empty() && d.author != author) continue;
    if (count++ / kPage == *page) items.push_back(discussion_json(*repo, d));
  }
  send_json(res, {{"discussions", items}, {"count", count}, {"start", *page * kPage}, {"numClosedDiscussions", 0}});
}

void post_discussion_change(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key,
                            std::string_view num_text, std::string_view resource) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo) return;
  if (!who.grant && !hub.open_mode()) return send_error(res, 401, "Unauthorized", "You must be authenticated to do this");
  auto d = find_numbered(hub, *repo, num_text, res);
  if (!d) return;
  const std::string user = who.grant ? who.grant->user : "khub";
  const bool manager = hub.can_write(who, repo->key.ns) || d->author == user;  // rename, open or close it
  auto body = read_body(reader, 1u << 20);
  if (!body) return send_error(res, body.error());
  json j = body->empty() ? json::object() : json_fields::parse_untrusted(*body);
  if (j.is_discarded() || !j.is_object()) return send_error(res, 400, "BadRequest", "request body is not a JSON object");
  using T = json::value_t;
  if (!check_field_types(j, {{"comment", T::string}, {"title", T::string}, {"status", T::string}, {"content", T::string}}, res)) {
    return;
  }
  auto text_field = [&](const char* name) -> std::optional<std::string> {
    auto text = string_field(j, name);
    if (trimmed(text).empty() || text.size() > 65536) {
      send_error(res, 400, "BadRequest", std::string(name) + " must be 1 to 65536 bytes");
      return std::nullopt;
    }
    return text;
  };
  auto answer = [&](const char* field, const Expected<DiscussionEvent>& e) {
    if (!e) return send_error(res, e.error());
    send_json(res, {{field, event_json(hub, *repo, d->num, *e)}});
  };
  auto forbidden = [&] { send_error(res, 403, "Forbidden", "only the author or a writer of " + repo->key.id() + " may do this"); };
  if (resource == "comment") {
    auto text = text_field("comment");
    if (text) answer("newMessage", hub.store.add_discussion_event(*repo, d->num, "comment", user, *text));
    return;
  }
  if (resource == "title") {
    if (!manager) return forbidden();
    auto title = trimmed(string_field(j, "title"));
    if (title.size() < 3 || title.size() > 200) return send_error(res, 400, "BadRequest", "title must be 3 to 200 characters long");
    return answer("newTitle", hub.store.add_discussion_event(*repo, d->num, "title-change", user, d->title + "\n" + title));
  }
  if (resource == "status") {
    if (!manager) return forbidden();
    auto status = string_field(j, "status");
    if (status != "open" && status != "closed") return send_error(res, 400, "BadRequest", "status must be open or closed");
    if (d->status == "merged") return send_error(res, 400, "BadRequest", "a merged pull request stays merged");
    if (auto comment = string_field(j, "comment"); !trimmed(comment).empty() && comment.size() <= 65536) {
      if (auto c = hub.store.add_discussion_event(*repo, d->num, "comment", user, comment); !c) return send_error(res, c.error());
    }
    return answer("newStatus", hub.store.add_discussion_event(*repo, d->num, "status-change", user, status));
  }
  if (resource == "merge") {
    if (!d->is_pull_request) return send_error(res, 400, "BadRequest", "discussion " + std::to_string(d->num) + " is not a pull request");
    if (!require_write(hub, who, repo->key.ns, res)) return;
    auto merged = hub.store.merge_pull_request(*repo, d->num, user);
    if (!merged) return send_error(res, merged.error());
    return send_json(res, {{"mergeCommitId", *merged}});
  }
  if (resource.starts_with("comment/") && resource.ends_with("/edit")) {
    const auto id = resource.substr(8, resource.size() - 8 - 5);
    auto events = hub.store.discussion_events(*repo, d->num);
    if (!events) return send_error(res, events.error());
    for (const auto& e : *events) {
      if (e.type != "comment" || event_id(hub, *repo, d->num, e.seq) != id) continue;
      if (e.author != user && !hub.can_write(who, repo->key.ns)) return forbidden();
      auto text = text_field("content");
      if (!text) return;
      if (auto st = hub.store.edit_discussion_comment(*repo, d->num, e.seq, *text); !st) return send_error(res, st.error());
      DiscussionEvent edited = e;
      edited.data = *text;
      edited.edited = true;
      return send_json(res, {{"updatedComment", event_json(hub, *repo, d->num, edited)}});
    }
    return send_error(res, 404, "NotFound", "Comment " + std::string(id) + " not found");
  }
  send_error(res, 404, "NotFound", "no route for POST " + req.path);
}

}  // namespace khub::localhub
