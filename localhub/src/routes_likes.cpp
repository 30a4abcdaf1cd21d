// Likes: POST/DELETE /api/{type}s/{repo}/like, GET …/likers, GET /api/users/{user}/likes.
#include "routes.h"

namespace khub::localhub {

using nlohmann::json;

void put_like(Hub& hub, const Req& req, Res& res, const RepoKey& key, bool liked) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo) return;
  if (!who.grant) return send_error(res, 401, "Unauthorized", "You must be authenticated to like a repo");
  if (auto st = hub.store.set_like(*repo, who.grant->user, liked); !st) return send_error(res, st.error());
  send_json(res, json::object());
}

void get_likers(Hub& hub, const Req& req, Res& res, const RepoKey& key) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo) return;
  auto users = hub.store.likers(*repo);
  if (!users) return send_error(res, users.error());
  json out = json::array();
  for (const auto& u : *users) {
    std::string fullname = u;
    for (const auto& g : hub.config.tokens)
      if (g.user == u && !g.fullname.empty()) fullname = g.fullname;
    out.push_back({{"user", u}, {"fullname", fullname}, {"avatarUrl", ""}, {"type", "user"}});
  }
  send_json(res, out);
}

void get_user_likes(Hub& hub, const Req& req, Res& res, std::string_view user) {
  auto who = hub.identify(req);
  if (who.bad_token) return send_error(res, 401, "", "Invalid credentials in Authorization header");
  if (user.empty() || user.size() > 96) return send_error(res, 400, "BadRequest", "invalid user name");
  auto likes = hub.store.likes_of(user);
  if (!likes) return send_error(res, likes.error());
  json out = json::array();
  for (const auto& [repo, when] : *likes) {
    if (!hub.can_read(who, repo)) continue;  // a private repo's like shows only to its readers
    out.push_back({{"createdAt", iso_time(when)},
                   {"repo", {{"name", repo.key.id()}, {"type", std::string(to_string(repo.key.type))}}}});
  }
  send_json(res, out);
}

}  // namespace khub::localhub
