// Renames and history rewrites: POST /api/repos/move, POST …/super-squash/{rev}, GET …/lfs-files
// and POST …/lfs-files/batch (permanent deletion); and the redirect a moved repo's old id gets.
#include "khub/base/hash.h"
#include "khub/json/fields.h"
#include "routes.h"

namespace khub::localhub {

using nlohmann::json;

namespace {
// "ns/name" → key of `type`; nullopt when either part is not a valid name.
std::optional<RepoKey> parse_repo_id(std::string_view id, RepoType type) {
  auto slash = id.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  RepoKey key{type, std::string(id.substr(0, slash)), std::string(id.substr(slash + 1))};
  if (!is_valid_repo_name(key.ns) || !is_valid_repo_name(key.name)) return std::nullopt;
  return key;
}

std::optional<json> small_json_body(const Reader& reader, Res& res) {
  auto body = read_body(reader, 1u << 20);
  if (!body) {
    send_error(res, body.error());
    return std::nullopt;
  }
  json j = body->empty() ? json::object() : json_fields::parse_untrusted(*body);
  if (j.is_discarded() || !j.is_object()) {
    send_error(res, 400, "BadRequest", "request body is not a JSON object");
    return std::nullopt;
  }
  return j;
}
}  // namespace

std::optional<RepoRecord> find_readable_repo_following_moves(Hub& hub, const Identity& who, const RepoKey& key,
                                                             const Req& req, Res& res) {
  if (!who.bad_token) {
    auto repo = hub.store.find_repo(key);
    if (!repo && repo.error().code == ErrorCode::RepoNotFound) {
      auto moved = hub.store.find_redirect(key);
      if (moved && *moved && hub.can_read(who, **moved)) {
        // The same URL under the new id: "/{ns}/{name}" as the client spelled it, replaced once.
        const std::string old_id = "/" + key.ns + "/" + key.name;
        std::string location = req.target;
        if (auto at = location.find(old_id); at != std::string::npos) {
          location.replace(at, old_id.size(), "/" + (*moved)->key.id());
          res.set_header("Location", location);
          res.status = 307;
          res.set_content("Temporary Redirect. Redirecting to " + location, "text/plain");
          return std::nullopt;
        }
      }
    }
  }
  return find_readable_repo(hub, who, key, res);
}

void post_move_repo(Hub& hub, const Req& req, Res& res, const Reader& reader) {
  using T = json::value_t;
  auto who = hub.identify(req);
  if (!require_some_write(hub, who, res)) return;
  auto j = small_json_body(reader, res);
  if (!j || !check_field_types(*j, {{"fromRepo", T::string}, {"toRepo", T::string}, {"type", T::string}}, res)) return;
  auto type = repo_type_from_name(string_field(*j, "type", "model"));
  if (!type) return send_error(res, 400, "BadRequest", "unknown repo type '" + string_field(*j, "type") + "'");
  auto from = parse_repo_id(string_field(*j, "fromRepo"), *type);
  auto to = parse_repo_id(string_field(*j, "toRepo"), *type);
  if (!from || !to) return send_error(res, 400, "BadRequest", "fromRepo and toRepo must be 'namespace/name'");
  if (!find_readable_repo(hub, who, *from, res)) return;
  if (!require_write(hub, who, from->ns, res) || !require_write(hub, who, to->ns, res)) return;
  if (auto st = hub.store.move_repo(*from, *to); !st) return send_error(res, st.error());
  send_json(res, json::object());
}

void post_super_squash(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key,
                       std::string_view rev) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo || !require_write(hub, who, key.ns, res)) return;
  auto j = small_json_body(reader, res);
  if (!j || !check_field_types(*j, {{"message", json::value_t::string}}, res)) return;
  auto message = string_field(*j, "message", "Super-squash branch '" + std::string(rev) + "'");
  if (message.empty() || message.size() > 65536) return send_error(res, 400, "BadRequest", "message must be 1 to 65536 bytes");
  auto oid = hub.store.squash_history(*repo, rev, message, who.grant ? who.grant->user : "khub");
  if (!oid) return send_error(res, oid.error());
  send_json(res, {{"commitOid", *oid}});
}

void get_lfs_files(Hub& hub, const Req& req, Res& res, const RepoKey& key) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo || !require_write(hub, who, key.ns, res)) return;
  auto objects = hub.store.list_lfs_objects(*repo);
  if (!objects) return send_error(res, objects.error());
  json out = json::array();
  for (const auto& o : *objects) {
    out.push_back({{"fileOid", o.sha256}, {"oid", o.sha256}, {"filename", o.filename}, {"size", o.size},
                   {"ref", o.ref}, {"pushedAt", iso_time(o.pushed_at)}});
  }
  send_json(res, out);
}

void post_lfs_files_batch(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo || !require_write(hub, who, key.ns, res)) return;
  auto j = small_json_body(reader, res);
  if (!j) return;
  const json* deletions = j->contains("deletions") && (*j)["deletions"].is_object() ? &(*j)["deletions"] : nullptr;
  if (!deletions || !deletions->contains("sha") || !(*deletions)["sha"].is_array()) {
    return send_error(res, 400, "BadRequest", "body needs {\"deletions\": {\"sha\": [...]}}");
  }
  if (!bool_field(*deletions, "rewriteHistory", true)) {
    return send_error(res, 400, "BadRequest", "only rewriteHistory: true is supported (a pointer without its object would break downloads)");
  }
  const auto& list = (*deletions)["sha"];
  if (list.size() > 1000) return send_error(res, 400, "BadRequest", "at most 1000 sha per request");
  std::vector<std::string> shas;
  for (const auto& s : list) {
    if (!s.is_string() || s.get<std::string>().size() != 64 || !is_hex(s.get<std::string>())) {
      return send_error(res, 400, "BadRequest", "each sha must be 64 hex characters");
    }
    shas.push_back(s.get<std::string>());
  }
  auto found = hub.store.purge_lfs_objects(*repo, shas);
  if (!found) return send_error(res, found.error());
  send_json(res, json::object());
}

}  // namespace khub::localhub
