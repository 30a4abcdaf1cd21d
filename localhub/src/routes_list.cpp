// GET /api/{models|datasets|spaces|kernels}: the repos a caller may see, newest first, filtered by
// `author` (namespace), `search` (part of the id) and `gated`, in pages of `limit` with a `Link` to
// the next.
// Repos here carry no tags, pipeline or library, so a query on those (`filter`, `pipeline_tag`, …)
// matches none, as it would match no untagged repo on the Hub.
#include "routes.h"

namespace khub::localhub {

using nlohmann::json;

void get_repo_list(Hub& hub, const Req& req, Res& res, RepoType type) {
  auto who = hub.identify(req);
  if (who.bad_token) return send_error(res, 401, "", "Invalid credentials in Authorization header");
  auto limit = count_param(req, res, "limit", 1000, 1, 1000);
  auto cursor = count_param(req, res, "cursor", 0, 0, SIZE_MAX / 2);
  if (!limit || !cursor) return;
  auto author = req.get_param_value("author"), search = req.get_param_value("search");
  if (author.size() > 256 || search.size() > 256) return send_error(res, 400, "BadRequest", "author and search: at most 256 bytes");
  bool tag_query = false;
  for (const char* key : {"filter", "pipeline_tag", "apps", "inference", "inference_provider", "trained_dataset",
                          "num_parameters", "library", "language", "task_categories"}) {
    tag_query |= req.has_param(key);
  }
  std::vector<RepoRecord> visible;
  if (!tag_query) {
    auto repos = hub.store.list_repos(type, author, search);
    if (!repos) return send_error(res, repos.error());
    const auto gated = req.get_param_value("gated");  // "True"/"False": gated repos only, or ungated only
    for (auto& r : *repos) {
      if (!gated.empty() && (gated == "True" || gated == "true") == r.gated.empty()) continue;
      if (hub.can_read(who, r)) visible.push_back(std::move(r));
    }
  }
  json page = json::array();
  for (std::size_t i = *cursor; i < visible.size() && page.size() < *limit; ++i) {
    const auto& r = visible[i];
    json item{{"_id", hub.sign("repo:" + std::to_string(r.rowid)).substr(0, 24)},
              {"id", r.key.id()},
              {"author", r.key.ns},
              {"private", r.is_private},
              {"gated", r.gated.empty() ? json(false) : json(r.gated)},
              {"disabled", false},
              {"downloads", 0},
              {"likes", 0},
              {"tags", json::array()},
              {"createdAt", iso_time(r.created_at)}};
    if (auto head = hub.store.resolve_revision(r, "main")) {
      item["sha"] = *head;
      if (auto info = hub.store.commit_info(r, *head)) item["lastModified"] = iso_time(info->created_at);
    }
    page.push_back(std::move(item));
  }
  if (*cursor + *limit < visible.size()) {
    std::string next = base_url(req, hub.port) + "/api/" + std::string(api_segment(type)) + "?limit=" +
                       std::to_string(*limit) + "&cursor=" + std::to_string(*cursor + *limit);
    if (!author.empty()) next += "&author=" + url_encode(author, false);
    if (!search.empty()) next += "&search=" + url_encode(search, false);
    res.set_header("Link", "<" + next + ">; rel=\"next\"");
  }
  send_json(res, page);
}

}  // namespace khub::localhub
