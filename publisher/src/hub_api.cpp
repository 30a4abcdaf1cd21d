#include "hub_api.h"
#include "khub/base/url.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "khub/base/hash.h"
#include "khub/base/redact.h"

namespace khub::publish::detail {
namespace {

using Json = nlohmann::json;

const char* kLfsContentType = "application/vnd.git-lfs+json";

// 501 (Not Implemented) is no passing trouble: a web server that is no Hub answers it to a POST.
bool is_transient(int status) { return status == 408 || status == 429 || status == 500 || (status >= 502 && status <= 504); }

// "scheme://host[:port]" of a URL.
std::string origin_of(const std::string& url) {
  auto scheme = url.find("://");
  if (scheme == std::string::npos) return {};
  auto slash = url.find('/', scheme + 3);
  return url.substr(0, slash);
}

// Seconds to wait on a 429: `RateLimit: "api";r=0;t=N` → N + 1, else `Retry-After: N` → N + 1.
std::optional<int> rate_limit_wait(const HttpResponse& r) {
  std::string rl = r.header("RateLimit");
  if (rl.find("r=0") != std::string::npos) {
    auto t = rl.find("t=");
    if (t != std::string::npos) return std::atoi(rl.c_str() + t + 2) + 1;
  }
  std::string ra = r.header("Retry-After");
  if (!ra.empty() && std::all_of(ra.begin(), ra.end(), ::isdigit)) return std::atoi(ra.c_str()) + 1;
  return std::nullopt;
}

std::string next_link(const std::string& link) {
  // <url>; rel="next", <url2>; rel="prev"
  std::size_t pos = 0;
  while (pos < link.size()) {
    auto lt = link.find('<', pos), gt = link.find('>', pos);
    if (lt == std::string::npos || gt == std::string::npos) break;
    auto end = link.find(',', gt);
    std::string params = link.substr(gt + 1, end == std::string::npos ? std::string::npos : end - gt - 1);
    if (params.find("rel=\"next\"") != std::string::npos || params.find("rel=next") != std::string::npos) {
      return link.substr(lt + 1, gt - lt - 1);
    }
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return {};
}

Headers json_headers(const Json& obj) {
  Headers out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.items()) out.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

std::string read_prefix(const std::filesystem::path& p, std::size_t n) {
  std::ifstream in(p, std::ios::binary);
  std::string buf(n, '\0');
  in.read(buf.data(), static_cast<std::streamsize>(n));
  buf.resize(static_cast<std::size_t>(in.gcount()));
  return buf;
}

// Server JSON is untrusted: a missing key or a value of another type reads as empty / false.
std::string str(const Json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool flag(const Json& obj, const char* key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

const Json& member(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

}  // namespace

std::string encode_segment(std::string_view s) { return percent_encode(s); }

HubSession::HubSession(UploadTransport& transport, std::string endpoint, std::string token, std::string repo_type,
                       std::string repo_id, RetryPolicy retry)
    : transport_(transport), endpoint_(std::move(endpoint)), token_(std::move(token)),
      repo_type_(std::move(repo_type)), repo_id_(std::move(repo_id)), retry_(retry) {
  while (endpoint_.ends_with('/')) endpoint_.pop_back();
}

std::string HubSession::api_base() const { return endpoint_ + "/api/" + repo_type_ + "s/" + repo_id_; }

Expected<HttpResponse> HubSession::call(HttpRequest request, bool hub_auth, bool retry) {
  // Never send the token to another host than the Hub's.
  if (hub_auth && !token_.empty() && origin_of(request.url) == origin_of(endpoint_)) {
    request.headers.emplace_back("Authorization", "Bearer " + token_);
  }
  static constexpr int kFactors[] = {1, 2, 4, 8, 8};
  for (int attempt = 0;; ++attempt) {
    auto response = transport_.send(request);
    bool can_retry = retry && attempt < retry_.max_retries;
    auto pause = [&](const std::string& why, int wait_ms) {
      if (retry_.notify) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.1f", wait_ms / 1000.0);
        retry_.notify(request.method + " " + redact(request.url.substr(0, request.url.find('?'))) + ": " + why +
                      "; retry " + std::to_string(attempt + 1) + " of " + std::to_string(retry_.max_retries) + " in " +
                      secs + " s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    };
    if (!response) {
      if (can_retry && response.error().code == ErrorCode::Network) {
        pause(response.error().message, retry_.base_delay_ms * kFactors[std::min(attempt, 4)]);
        continue;
      }
      return response;
    }
    if (can_retry && is_transient(response->status)) {
      int wait = retry_.base_delay_ms * kFactors[std::min(attempt, 4)];
      if (response->status == 429) {
        if (auto s = rate_limit_wait(*response)) wait = *s * retry_.base_delay_ms;
      }
      pause("HTTP " + std::to_string(response->status), wait);
      continue;
    }
    return response;
  }
}

Error HubSession::http_error(const HttpRequest& request, const HttpResponse& r) const {
  std::string code = r.header("X-Error-Code");
  std::string message = r.header("X-Error-Message");
  if (message.empty()) {
    Json body = Json::parse(r.body, nullptr, false);
    if (body.is_object() && body.contains("error") && body["error"].is_string()) {
      message = body["error"].get<std::string>();
    } else {
      message = server_text_line(r.body);
    }
  }
  ErrorCode ec = ErrorCode::Protocol;
  std::string hint;
  if (code == "RepoNotFound") ec = ErrorCode::RepoNotFound;
  else if (code == "RevisionNotFound") ec = ErrorCode::RevisionNotFound;
  else if (code == "EntryNotFound") ec = ErrorCode::EntryNotFound;
  else if (r.status == 401) ec = ErrorCode::Unauthorized, hint = "set HF_TOKEN to a token with write access";
  else if (r.status == 403) ec = ErrorCode::Forbidden, hint = "check that the token may write to " + repo_id_;
  else if (r.status == 404) ec = ErrorCode::RepoNotFound;
  else if (r.status == 409 || r.status == 412) ec = ErrorCode::Conflict;
  else if (r.status == 429) ec = ErrorCode::RateLimited;
  else if (r.status >= 500 && is_transient(r.status)) ec = ErrorCode::Network;
  auto q = request.url.find('?');
  Error err(ec, request.method + " " + request.url.substr(0, q) + ": " + std::to_string(r.status) +
                    (message.empty() ? "" : " " + message),
            hint);
  err.http_status = r.status;
  if (auto id = r.header("X-Request-Id"); !id.empty()) err.note("request id " + id);
  return err;
}

Expected<std::string> HubSession::whoami() {
  HttpRequest req{"GET", endpoint_ + "/api/whoami-v2", {}, {}, {}};
  KHUB_TRY(auto r, call(req, true, true));
  if (r.status != 200) return http_error(req, r);
  Json j = Json::parse(r.body, nullptr, false);
  const std::string name = j.is_object() ? str(j, "name") : std::string();
  if (name.empty()) return Error(ErrorCode::Protocol, "GET " + req.url + ": no user name in the answer");
  return name;
}

Status HubSession::create_repo(bool is_private) {
  auto slash = repo_id_.find('/');
  Json body = {{"name", repo_id_.substr(slash + 1)}, {"organization", repo_id_.substr(0, slash)},
               {"type", repo_type_}, {"private", is_private}};
  HttpRequest req{"POST", endpoint_ + "/api/repos/create", {{"Content-Type", "application/json"}}, body.dump(), {}};
  KHUB_TRY(auto r, call(req, true, true));
  if (r.status == 200 || r.status == 201 || r.status == 409) return {};
  auto err = http_error(req, r);
  if (r.status == 403) {
    err.hint = "the token may not create repos in `" + repo_id_.substr(0, slash) +
               "`; publishing to kernels-community needs approval: "
               "https://huggingface.co/spaces/kernels-community/README/discussions/new";
  }
  return err;
}

Expected<std::map<std::string, std::string>> HubSession::branches() {
  HttpRequest req{"GET", api_base() + "/refs", {}, {}, {}};
  KHUB_TRY(auto r, call(req, true, true));
  if (r.status != 200) return http_error(req, r);
  Json j = Json::parse(r.body, nullptr, false);
  if (!j.is_object()) return Error(ErrorCode::Protocol, "GET " + req.url + ": response is not a JSON object");
  std::map<std::string, std::string> out;
  const Json& list = member(j, "branches");
  // A refs answer without a branch list must not read as "no branches" (push would create one).
  if (!list.is_array()) return Error(ErrorCode::Protocol, "GET " + req.url + ": `branches` is not a list");
  for (const auto& b : list) {
    if (b.is_object() && b.contains("name") && b["name"].is_string()) {
      out[b["name"].get<std::string>()] = str(b, "targetCommit");
    }
  }
  return out;
}

Status HubSession::create_branch(const std::string& branch) {
  HttpRequest req{"POST", api_base() + "/branch/" + encode_segment(branch), {{"Content-Type", "application/json"}},
                  "{}", {}};
  KHUB_TRY(auto r, call(req, true, true));
  if (r.status == 200 || r.status == 201 || r.status == 409) return {};
  return http_error(req, r);
}

Status HubSession::delete_branch(const std::string& branch) {
  HttpRequest req{"DELETE", api_base() + "/branch/" + encode_segment(branch), {}, {}, {}};
  KHUB_TRY(auto r, call(req, true, true));
  if (r.status == 200 || r.status == 204 || r.status == 404) return {};
  return http_error(req, r);
}

Expected<std::vector<RemoteFile>> HubSession::list_files(const std::string& revision) {
  std::vector<RemoteFile> out;
  std::string url = api_base() + "/tree/" + encode_segment(revision) + "?recursive=true&expand=false";
  for (int page = 0; !url.empty() && page < 10000; ++page) {
    if (url.starts_with("/")) url = endpoint_ + url;
    HttpRequest req{"GET", url, {}, {}, {}};
    KHUB_TRY(auto r, call(req, true, true));
    if (r.status != 200) return http_error(req, r);
    Json j = Json::parse(r.body, nullptr, false);
    if (!j.is_array()) return Error(ErrorCode::Protocol, "GET " + url + ": tree is not a JSON array");
    for (const auto& e : j) {
      if (str(e, "type") != "file") continue;
      RemoteFile f{str(e, "path"), str(e, "oid"), std::nullopt};
      if (member(e, "lfs").is_object()) f.lfs_oid = str(e["lfs"], "oid");
      out.push_back(std::move(f));
    }
    url = next_link(r.header("Link"));
  }
  return out;
}

Expected<std::map<std::string, PreuploadInfo>> HubSession::preupload(const std::string& revision,
                                                                     const std::vector<LocalFile>& files,
                                                                     bool create_pr) {
  std::map<std::string, PreuploadInfo> out;
  for (std::size_t start = 0; start < files.size(); start += 1000) {
    Json list = Json::array();
    for (std::size_t i = start; i < std::min(files.size(), start + 1000); ++i) {
      auto sample = read_prefix(files[i].source, 512);
      list.push_back({{"path", files[i].repo_path},
                      {"size", files[i].size},
                      {"sample", base64_encode(std::span(reinterpret_cast<const std::uint8_t*>(sample.data()),
                                                         sample.size()))}});
    }
    HttpRequest req{"POST", api_base() + "/preupload/" + encode_segment(revision) + (create_pr ? "?create_pr=1" : ""),
                    {{"Content-Type", "application/json"}}, Json{{"files", list}}.dump(), {}};
    KHUB_TRY(auto r, call(req, true, true));
    if (r.status != 200) return http_error(req, r);
    Json j = Json::parse(r.body, nullptr, false);
    if (!j.is_object() || !j.contains("files")) return Error(ErrorCode::Protocol, "preupload: malformed response");
    if (!j["files"].is_array()) return Error(ErrorCode::Protocol, "preupload: malformed response");
    for (const auto& f : j["files"]) {
      // An entry without a string path or mode would default every file to a regular upload.
      if (!f.is_object() || !member(f, "path").is_string() || !member(f, "uploadMode").is_string()) {
        return Error(ErrorCode::Protocol, "preupload: an answer entry lacks its path or uploadMode");
      }
      PreuploadInfo info;
      info.lfs = str(f, "uploadMode") == "lfs";
      info.should_ignore = flag(f, "shouldIgnore");
      if (auto oid = str(f, "oid"); !oid.empty()) info.oid = oid;
      out[str(f, "path")] = info;
    }
  }
  return out;
}

Expected<std::vector<LfsAction>> HubSession::lfs_batch(const std::vector<const LocalFile*>& files,
                                                      const std::optional<std::string>& ref) {
  const std::string prefix = repo_type_ == "model" ? "" : repo_type_ + "s/";
  Json objects = Json::array();
  for (const auto* f : files) objects.push_back({{"oid", f->sha256}, {"size", f->size}});
  Json body = {{"operation", "upload"}, {"transfers", {"basic", "multipart"}}, {"objects", objects},
               {"hash_algo", "sha256"}};
  if (ref) body["ref"] = {{"name", *ref}};
  HttpRequest req{"POST", endpoint_ + "/" + prefix + repo_id_ + ".git/info/lfs/objects/batch",
                  {{"Accept", kLfsContentType}, {"Content-Type", kLfsContentType}}, body.dump(), {}};
  KHUB_TRY(auto r, call(req, true, true));
  if (r.status != 200) return http_error(req, r);
  Json j = Json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("objects")) return Error(ErrorCode::Protocol, "LFS batch: malformed response");
  std::vector<LfsAction> out;
  if (!j["objects"].is_array()) return Error(ErrorCode::Protocol, "LFS batch: malformed response");
  for (const auto& o : j["objects"]) {
    LfsAction a;
    a.oid = str(o, "oid");
    if (o.contains("error")) {
      return Error(ErrorCode::Protocol, "LFS batch refused object " + a.oid + ": " +
                                            (str(o["error"], "message").empty() ? o["error"].dump() : str(o["error"], "message")));
    }
    const Json& actions = member(o, "actions");
    if (member(actions, "upload").is_object()) {
      const Json& up = member(actions, "upload");
      a.needs_upload = true;
      a.upload_href = str(up, "href");
      a.upload_headers = json_headers(member(up, "header"));
      const Json& verify = member(actions, "verify");
      a.verify_href = str(verify, "href");
      a.verify_headers = json_headers(member(verify, "header"));
      if (a.upload_href.empty()) return Error(ErrorCode::Protocol, "LFS batch: upload action without href");
    }
    out.push_back(std::move(a));
  }
  return out;
}

Expected<std::uint64_t> HubSession::lfs_upload(const LocalFile& file, const LfsAction& action) {
  std::uint64_t sent = 0;
  std::string chunk_size;
  std::vector<std::pair<int, std::string>> parts;
  Headers plain;
  for (const auto& [k, v] : action.upload_headers) {
    if (k == "chunk_size") {
      chunk_size = v;
    } else if (!k.empty() && std::all_of(k.begin(), k.end(), ::isdigit)) {
      parts.emplace_back(std::atoi(k.c_str()), v);
    } else {
      plain.emplace_back(k, v);
    }
  }
  if (chunk_size.empty()) {
    HttpRequest put{"PUT", action.upload_href, plain, {}, FileSlice{file.source, 0, file.size}};
    KHUB_TRY(auto r, call(put, false, true));
    if (r.status < 200 || r.status >= 300) return http_error(put, r);
    sent = file.size;
  } else {
    const bool numeric = chunk_size.size() < 19 && std::all_of(chunk_size.begin(), chunk_size.end(), ::isdigit);
    std::uint64_t chunk = numeric ? std::stoull(chunk_size) : 0;
    std::sort(parts.begin(), parts.end());
    if (chunk == 0 || parts.size() != (file.size + chunk - 1) / chunk) {
      return Error(ErrorCode::Protocol, "LFS multipart for " + file.repo_path + ": " + std::to_string(parts.size()) +
                                            " part URLs for " + std::to_string(file.size) + " bytes in chunks of " +
                                            chunk_size);
    }
    Json completed = Json::array();
    for (std::size_t i = 0; i < parts.size(); ++i) {
      std::uint64_t offset = i * chunk, len = std::min(chunk, file.size - offset);
      HttpRequest put{"PUT", parts[i].second, {}, {}, FileSlice{file.source, offset, len}};
      KHUB_TRY(auto r, call(put, false, true));
      if (r.status < 200 || r.status >= 300) return http_error(put, r);
      completed.push_back({{"partNumber", parts[i].first}, {"etag", r.header("ETag")}});
      sent += len;
    }
    HttpRequest done{"POST", action.upload_href, {{"Accept", kLfsContentType}, {"Content-Type", kLfsContentType}},
                     Json{{"oid", file.sha256}, {"parts", completed}}.dump(), {}};
    KHUB_TRY(auto r, call(done, false, true));
    if (r.status < 200 || r.status >= 300) return http_error(done, r);
  }
  if (!action.verify_href.empty()) {
    Headers h = action.verify_headers;
    h.emplace_back("Accept", kLfsContentType);
    h.emplace_back("Content-Type", kLfsContentType);
    HttpRequest verify{"POST", action.verify_href, h, Json{{"oid", file.sha256}, {"size", file.size}}.dump(), {}};
    KHUB_TRY(auto r, call(verify, true, true));
    if (r.status < 200 || r.status >= 300) return http_error(verify, r);
  }
  return sent;
}

Expected<CommitOutcome> HubSession::commit(const std::string& revision, const std::string& ndjson, bool create_pr) {
  HttpRequest req{"POST", api_base() + "/commit/" + encode_segment(revision) + (create_pr ? "?create_pr=1" : ""),
                  {{"Content-Type", "application/x-ndjson"}}, ndjson, {}};
  KHUB_TRY(auto r, call(req, true, false));
  if (r.status != 200 && r.status != 201) return http_error(req, r);
  Json j = Json::parse(r.body, nullptr, false);
  if (!j.is_object()) return Error(ErrorCode::Protocol, "commit: response is not a JSON object");
  CommitOutcome out;
  out.commit_oid = str(j, "commitOid");
  // The commit the push reports and pins: a missing or malformed id is not a successful upload.
  if (!is_commit_hash(out.commit_oid)) {
    return Error(ErrorCode::Protocol, "commit: the Hub answered no commit id (`commitOid`)");
  }
  out.pr_url = str(j, "pullRequestUrl");
  if (auto pos = out.pr_url.rfind("/discussions/"); pos != std::string::npos) {
    out.pr_number = std::atoi(out.pr_url.c_str() + pos + 13);
  }
  return out;
}

}  // namespace khub::publish::detail
