// Hub API calls: revision info, tree listing with Link pagination, refs, organisation overview.
#include "khub/hub/hub_client.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "client_impl.h"
#include "khub/base/hash.h"
#include "khub/base/redact.h"

namespace khub::hub {
using detail::HttpRequest;
using detail::HttpResponse;
using nlohmann::json;

HubClient::Impl::Impl(ClientOptions o) : options(std::move(o)) {
  while (!options.endpoint.empty() && options.endpoint.back() == '/') options.endpoint.pop_back();
  user_agent = render_user_agent(options);
  endpoint_origin = detail::url_origin(options.endpoint);
  static std::atomic<std::uint64_t> counter{0};
  instance_id = ++counter;
}

bool HubClient::Impl::is_hub_host(const std::string& url) const {
  std::string origin = detail::url_origin(url);
  if (origin.empty()) return false;  // not an absolute URL: no token
  if (origin == endpoint_origin) return true;
  // Extra hub hosts only over the endpoint's own scheme: an https hub's token never goes out over http.
  const auto scheme = [](const std::string& o) { return o.substr(0, o.find("://")); };
  if (scheme(origin) != scheme(endpoint_origin)) return false;
  for (const auto& host : options.extra_hub_hosts)
    if (origin.size() > host.size() && origin.compare(origin.size() - host.size(), host.size(), host) == 0 &&
        origin[origin.size() - host.size() - 1] == '/')
      return true;
  return false;
}

std::vector<std::string> HubClient::Impl::headers_for(const std::string& url) const {
  std::vector<std::string> h{"User-Agent: " + user_agent};
  if (!options.token.empty() && is_hub_host(url)) h.push_back("Authorization: Bearer " + options.token);
  return h;
}

Error HubClient::Impl::offline_error(std::string_view what) const {
  return Error(ErrorCode::OfflineMiss, std::string(what) + ": not available offline (HF_HUB_OFFLINE is set)",
               "download it once while online, or unset HF_HUB_OFFLINE");
}

std::chrono::milliseconds HubClient::Impl::retry_wait(int attempt, const HttpResponse* res) const {
  using std::chrono::milliseconds;
  milliseconds wait{0};
  bool from_server = false;
  if (res && res->status == 429) {
    // RateLimit: "api";r=0;t=55 → t+1 s; else Retry-After: <seconds> + 1 s.
    std::string rl = res->header("ratelimit");
    auto r = rl.find("r=");
    auto t = rl.find("t=");
    if (r != std::string::npos && t != std::string::npos && std::atol(rl.c_str() + r + 2) == 0) {
      wait = milliseconds((std::atol(rl.c_str() + t + 2) + 1) * 1000);
      from_server = true;
    } else if (auto ra = res->header("retry-after"); !ra.empty() && std::isdigit(static_cast<unsigned char>(ra[0]))) {
      wait = milliseconds((std::atol(ra.c_str()) + 1) * 1000);
      from_server = true;
    }
  }
  if (!from_server) {
    static constexpr int kSteps[] = {1, 2, 4, 8, 8};
    wait = options.retry_base * kSteps[std::min(attempt, 4)];
    thread_local std::mt19937 rng{std::random_device{}()};
    std::uniform_real_distribution<double> jitter(0.75, 1.25);
    wait = milliseconds(static_cast<long long>(static_cast<double>(wait.count()) * jitter(rng)));
  }
  return std::min(wait, options.max_retry_wait);
}

void HubClient::Impl::pause_before_retry(const std::string& what, int attempt, int of, std::chrono::milliseconds wait) {
  if (options.progress) options.progress->on_retry(what, attempt + 1, of, wait);
  std::this_thread::sleep_for(wait);
}

Expected<HttpResponse> HubClient::Impl::send(const HttpRequest& request) {
  if (options.offline) return offline_error(request.method + " " + redact(request.url));
  const int retries = request.max_retries >= 0 ? request.max_retries : options.max_retries;
  for (int attempt = 0;; ++attempt) {
    auto res = http.perform(request);
    bool last = attempt >= retries;
    if (!res) {
      if (res.error().code != ErrorCode::Network || last) return res;
      pause_before_retry(res.error().message, attempt, retries, retry_wait(attempt, nullptr));  // names the URL
      continue;
    }
    if (!is_retryable_status(res->status) || last) return res;
    pause_before_retry(request.method + " " + redact(request.url) + ": HTTP " + std::to_string(res->status), attempt,
                       retries, retry_wait(attempt, &res.value()));
  }
}

HubClient::HubClient(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
HubClient::~HubClient() = default;
const ClientOptions& HubClient::options() const noexcept { return impl_->options; }
std::uint64_t HubClient::request_count() const noexcept { return impl_->http.request_count(); }
std::uint64_t HubClient::instance_id() const noexcept { return impl_->instance_id; }

namespace {

Expected<json> get_json(HubClient::Impl& impl, const std::string& url, const ErrorContext& ctx,
                        HttpResponse* out = nullptr, int max_retries = -1) {
  HttpRequest req;
  req.url = url;
  req.max_retries = max_retries;
  req.headers = impl.headers_for(url);
  req.timeout = impl.options.etag_timeout;
  KHUB_TRY(auto res, impl.send(req));
  if (res.status < 200 || res.status >= 300) return http_error("GET", url, res, ctx);
  auto j = json::parse(res.body, nullptr, false);
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

// `<url>; rel="next"` in a Link header.
std::string next_link(const std::string& link) {
  std::size_t pos = 0;
  while (pos < link.size()) {
    auto lt = link.find('<', pos);
    if (lt == std::string::npos) return {};
    auto gt = link.find('>', lt);
    if (gt == std::string::npos) return {};
    auto end = link.find(',', gt);
    std::string params = link.substr(gt + 1, end == std::string::npos ? std::string::npos : end - gt - 1);
    if (params.find("rel=\"next\"") != std::string::npos || params.find("rel=next") != std::string::npos)
      return link.substr(lt + 1, gt - lt - 1);
    if (end == std::string::npos) return {};
    pos = end + 1;
  }
  return {};
}

}  // namespace

Expected<std::string> HubClient::revision_commit(const RepoRef& repo, std::string_view revision, bool retry) {
  std::string url = api_url(impl_->options.endpoint, repo, "/revision/" + encode_segment(revision));
  KHUB_TRY(auto j, get_json(*impl_, url, ErrorContext{&repo, revision, {}}, nullptr, retry ? -1 : 0));
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
  for (int page = 0; !url.empty(); ++page) {
    if (page > 100000) return shape_error(url, "endless pagination");
    HttpResponse res;
    KHUB_TRY(auto j, get_json(*impl_, url, ErrorContext{&repo, revision, path}, &res));
    if (!j.is_array()) return shape_error(url, "expected an array of entries");
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
      out.push_back(std::move(t));
    }
    std::string next = next_link(res.header("link"));
    url = next.empty() ? std::string() : detail::join_url(url, next);
  }
  return out;
}

Expected<RepoRefs> HubClient::list_refs(const RepoRef& repo) {
  std::string url = api_url(impl_->options.endpoint, repo, "/refs");
  KHUB_TRY(auto j, get_json(*impl_, url, ErrorContext{&repo, {}, {}}));
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
  KHUB_TRY(auto j, get_json(*impl_, url, ErrorContext{}));
  bool trusted = j.is_object() && j.contains("trustedKernelPublisher") && j["trustedKernelPublisher"].is_boolean() &&
                 j["trustedKernelPublisher"].get<bool>();
  std::lock_guard<std::mutex> g(impl_->memo_mutex);
  impl_->trusted_orgs[std::string(org)] = trusted;
  return trusted;
}

}  // namespace khub::hub
