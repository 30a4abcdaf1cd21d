// Hub API calls: revision info, tree listing with Link pagination, refs, organisation overview.
#include "khub/hub/hub_client.h"

#include <nlohmann/json.hpp>

#include <atomic>

#include "client_impl.h"
#include "khub/base/hash.h"
#include "khub/base/redact.h"
#include "khub/json/fields.h"

namespace khub::hub {
using nlohmann::json;

HubClient::Impl::Impl(ClientOptions o) : options(std::move(o)) {
  while (!options.endpoint.empty() && options.endpoint.back() == '/') options.endpoint.pop_back();
  transport = std::make_unique<CountingTransport>(http::make_curl_transport({.user_agent = render_user_agent(options),
                                                                            .ca_file = options.trusted_cas.file,
                                                                            .ca_dir = options.trusted_cas.dir}));
  static std::atomic<std::uint64_t> counter{0};
  instance_id = ++counter;
}

bool HubClient::Impl::is_hub_host(const std::string& url) const {
  return http::is_hub_host(url, options.endpoint, options.extra_hub_hosts);
}

http::Headers HubClient::Impl::headers_for(const std::string& url) const {
  http::Headers h;
  if (!options.token.empty() && is_hub_host(url)) h.emplace_back("Authorization", "Bearer " + options.token);
  return h;
}

http::Request HubClient::Impl::api_request(std::string method, const std::string& url) const {
  http::Request req;
  req.method = std::move(method);
  req.url = url;
  req.headers = headers_for(url);
  req.timeout = options.etag_timeout;
  req.total_timeout = 3 * options.etag_timeout;
  return req;
}

Error HubClient::Impl::offline_error(std::string_view what) const {
  return Error(ErrorCode::OfflineMiss, std::string(what) + ": not available offline (HF_HUB_OFFLINE is set)",
               "download it once while online, or unset HF_HUB_OFFLINE");
}

http::RetryNotice HubClient::Impl::retry_notice() const {
  return [progress = options.progress](std::string_view what, int attempt, int of, std::chrono::milliseconds wait) {
    if (progress) progress->on_retry(what, attempt, of, wait);
  };
}

Expected<http::Response> HubClient::Impl::perform(const http::Request& request) {
  if (options.offline) return offline_error(request.method + " " + redact(request.url));
  return transport->perform(request);
}

Expected<http::Response> HubClient::Impl::send(const http::Request& request, int retries) {
  if (options.offline) return offline_error(request.method + " " + redact(request.url));
  http::RetryPolicy policy = options.retry;
  if (retries >= 0) policy.max_retries = retries;
  return http::send_with_retries(*transport, request, policy, retry_notice());
}

HubClient::HubClient(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
HubClient::~HubClient() = default;
const ClientOptions& HubClient::options() const noexcept { return impl_->options; }
std::uint64_t HubClient::request_count() const noexcept { return impl_->transport->count(); }
std::uint64_t HubClient::instance_id() const noexcept { return impl_->instance_id; }

namespace {

Expected<json> get_json(HubClient::Impl& impl, const std::string& url, const http::ErrorContext& ctx,
                        http::Response* out = nullptr, int max_retries = -1) {
  KHUB_TRY(auto res, impl.send(impl.api_request("GET", url), max_retries));
  if (!res.ok()) return http::hub_error("GET", url, res, ctx);
  auto j = json_fields::parse_untrusted(res.body);
  if (j.is_discarded())
    return Error(ErrorCode::Protocol, "the server answered GET " + redact(url) + " with invalid JSON",
                 "check HF_ENDPOINT points at a Hugging Face Hub");
  if (out) *out = std::move(res);
  return j;
}

Error shape_error(const std::string& url, std::string_view what) {
  return Error(ErrorCode::Protocol,
               "unexpected JSON from GET " + redact(url) + ": " + std::string(what));
}

}  // namespace

Expected<std::string> HubClient::revision_commit(const RepoRef& repo, std::string_view revision, bool retry) {
  std::string url = api_url(impl_->options.endpoint, repo, "/revision/" + encode_segment(revision));
  KHUB_TRY(auto j, get_json(*impl_, url, error_context(&repo, revision), nullptr, retry ? -1 : 0));
  if (!j.is_object() || !j.contains("sha") || !j["sha"].is_string() || !is_commit_hash(j["sha"].get<std::string>()))
    return shape_error(url, "no commit `sha`");
  return j["sha"].get<std::string>();
}

Expected<std::vector<TreeEntry>> HubClient::list_tree(const RepoRef& repo, std::string_view revision,
                                                      std::string_view path, bool recursive) {
  if (!path.empty() && !is_safe_repo_path(path))
    return Error(ErrorCode::InvalidArgument, "unsafe path '" + std::string(path) + "'");
  std::string url = api_url(impl_->options.endpoint, repo, "/tree/" + encode_segment(revision));
  if (!path.empty()) url += "/" + encode_path(path);
  url += recursive ? "?recursive=true&expand=false" : "?expand=false";
  std::vector<TreeEntry> out;
  for (http::Pages pages(url);;) {
    url = pages.url();
    http::Response res;
    KHUB_TRY(auto j, get_json(*impl_, url, error_context(&repo, revision, path), &res));
    if (!j.is_array()) return shape_error(url, "expected an array of entries");
    KHUB_CHECK(pages.add_entries(j.size()));
    for (const auto& e : j) {
      if (!e.is_object() || !e.contains("path") || !e["path"].is_string() || !e.contains("type"))
        return shape_error(url, "entry without `path`/`type`");
      TreeEntry t;
      t.path = e["path"].get<std::string>();
      if (!is_safe_repo_path(t.path))
        return Error(ErrorCode::Protocol, "tree listing of " + repo.id + " has a path escaping the repo: '" +
                                              t.path + "'", "the server is not trustworthy; nothing was written");
      std::string type = e["type"].is_string() ? e["type"].get<std::string>() : "";
      t.directory = type == "directory";
      if (type != "file" && type != "directory") continue;
      if (e.contains("oid") && e["oid"].is_string()) t.oid = e["oid"].get<std::string>();
      if (e.contains("size") && e["size"].is_number_unsigned()) t.size = e["size"].get<std::uint64_t>();
      if (e.contains("lfs") && e["lfs"].is_object()) {
        const auto& lfs = e["lfs"];
        if (lfs.contains("oid") && lfs["oid"].is_string()) t.lfs_oid = lfs["oid"].get<std::string>();
        if (lfs.contains("size") && lfs["size"].is_number_unsigned()) t.size = lfs["size"].get<std::uint64_t>();
      }
      if (e.contains("xetHash") && e["xetHash"].is_string()) t.xet_hash = e["xetHash"].get<std::string>();
      out.push_back(std::move(t));
    }
    KHUB_TRY(bool more, pages.advance(res));
    if (!more) break;
  }
  return out;
}

Expected<RepoRefs> HubClient::list_refs(const RepoRef& repo) {
  std::string url = api_url(impl_->options.endpoint, repo, "/refs");
  KHUB_TRY(auto j, get_json(*impl_, url, error_context(&repo)));
  if (!j.is_object()) return shape_error(url, "expected an object");
  RepoRefs refs;
  for (auto [key, list] : {std::pair{"branches", &refs.branches}, std::pair{"tags", &refs.tags}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_array()) return shape_error(url, std::string("`") + key + "` is not an array");
    for (const auto& r : j[key]) {
      if (!r.is_object() || !r.contains("name") || !r["name"].is_string() || !r.contains("targetCommit") ||
          !r["targetCommit"].is_string())
        return shape_error(url, std::string("a ref in `") + key + "` lacks name/targetCommit");
      if (!is_commit_hash(r["targetCommit"].get<std::string>()))  // it names a cache folder: hex only
        return shape_error(url, std::string("a ref in `") + key + "` has a targetCommit that is not a commit hash");
      list->push_back(GitRef{r["name"].get<std::string>(),
                             r.contains("ref") && r["ref"].is_string() ? r["ref"].get<std::string>() : "",
                             r["targetCommit"].get<std::string>()});
    }
  }
  return refs;
}

Expected<bool> HubClient::is_trusted_publisher(std::string_view org) {
  {
    std::lock_guard<std::mutex> g(impl_->memo_mutex);
    if (auto it = impl_->trusted_orgs.find(std::string(org)); it != impl_->trusted_orgs.end()) return it->second;
  }
  std::string url = impl_->options.endpoint + "/api/organizations/" + encode_segment(org) + "/overview";
  KHUB_TRY(auto j, get_json(*impl_, url, {}));
  bool trusted = j.is_object() && j.contains("trustedKernelPublisher") && j["trustedKernelPublisher"].is_boolean() &&
                 j["trustedKernelPublisher"].get<bool>();
  std::lock_guard<std::mutex> g(impl_->memo_mutex);
  impl_->trusted_orgs[std::string(org)] = trusted;
  return trusted;
}

}  // namespace khub::hub
