// Access requests to gated repos, managed by the repo's writers:
// GET …/user-access-request/{pending|accepted|rejected}, POST …/user-access-request/grant {"user"}
// and POST …/user-access-request/handle {"user"|"requestId", "status", "rejectionReason"?}.
// An accepted user may download the repo's files (Hub::can_download_gated).
#include "khub/json/fields.h"
#include "routes.h"

namespace khub::localhub {

using nlohmann::json;

namespace {
std::string request_id(const Hub& hub, const RepoRecord& repo, std::string_view user) {
  std::string lower(user);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return hub.sign("access:" + std::to_string(repo.rowid) + ":" + lower).substr(0, 24);
}

std::string fullname_of(const Hub& hub, std::string_view user) {
  for (const auto& g : hub.config.tokens)
    if (g.user == user && !g.fullname.empty()) return g.fullname;
  return std::string(user);
}
}  // namespace

void access_requests_route(Hub& hub, const Req& req, Res& res, const Reader* reader, const RepoKey& key,
                           std::string_view action) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo || !require_write(hub, who, key.ns, res)) return;
  if (!reader) {  // GET: a list
    if (action != "pending" && action != "accepted" && action != "rejected") {
      return send_error(res, 404, "NotFound", "no route for GET " + req.path);
    }
    auto requests = hub.store.access_requests(*repo);
    if (!requests) return send_error(res, requests.error());
    json out = json::array();
    for (const auto& r : *requests) {
      if (r.status != action) continue;
      out.push_back({{"user", {{"user", r.user}, {"fullname", fullname_of(hub, r.user)}}},
                     {"requestId", request_id(hub, *repo, r.user)},
                     {"status", r.status},
                     {"timestamp", iso_time(r.updated_at)}});
    }
    return send_json(res, out);
  }
  auto body = read_body(*reader, 64u << 10);
  if (!body) return send_error(res, body.error());
  json j = json_fields::parse_untrusted(*body);
  if (j.is_discarded() || !j.is_object()) return send_error(res, 400, "BadRequest", "request body is not a JSON object");
  using T = json::value_t;
  if (!check_field_types(j, {{"user", T::string}, {"requestId", T::string}, {"status", T::string},
                             {"rejectionReason", T::string}}, res)) {
    return;
  }
  std::string user = string_field(j, "user");
  if (user.empty() && j.contains("requestId")) {  // find whose request has this id
    auto requests = hub.store.access_requests(*repo);
    if (!requests) return send_error(res, requests.error());
    for (const auto& r : *requests)
      if (request_id(hub, *repo, r.user) == string_field(j, "requestId")) user = r.user;
    if (user.empty()) return send_error(res, 404, "NotFound", "No access request with this id");
  }
  if (!is_valid_repo_name(user)) return send_error(res, 400, "BadRequest", "\"user\" must be a user name");
  Status st;
  if (action == "grant") {
    st = hub.store.set_access_request(*repo, user, "accepted", true);
  } else if (action == "handle") {
    auto status = string_field(j, "status");
    if (status != "accepted" && status != "rejected" && status != "pending") {
      return send_error(res, 400, "BadRequest", "status must be accepted, rejected or pending");
    }
    st = hub.store.set_access_request(*repo, user, status, false);
  } else {
    return send_error(res, 404, "NotFound", "no route for POST " + req.path);
  }
  if (!st) {
    auto e = st.error();
    if (e.code == ErrorCode::EntryNotFound) return send_error(res, 404, "NotFound", e.message);
    return send_error(res, e);
  }
  send_json(res, json::object());
}

}  // namespace khub::localhub
