#include "hub_api.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "khub/base/hash.h"
#include "khub/base/redact.h"
#include "khub/base/text.h"
#include "khub/base/url.h"
#include "khub/http/hub_answers.h"
#include "khub/json/fields.h"

namespace khub::publish::detail {
namespace {

using Json = nlohmann::json;
using http::Headers;
using http::Request;
using json_fields::field;
using json_fields::text;

const char* kLfsContentType = "application/vnd.git-lfs+json";

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

bool flag(const Json& obj, const char* key) {
  const Json& f = field(obj, key);
  return f.is_boolean() && f.get<bool>();
}

// A request of the publisher: JSON bodies, API calls capped at 10 minutes (LFS parts can be large).
Request request(std::string method, std::string url, Headers headers = {}, std::string body = {}) {
  Request r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.headers = std::move(headers);
  r.body = std::move(body);
  r.total_timeout = std::chrono::minutes(10);
  return r;
}

}  // namespace

std::string encode_segment(std::string_view s) { return percent_encode(s); }

HubSession::HubSession(http::Transport& transport, std::string endpoint, std::string token, RepoType repo_type,
                       std::string repo_id, http::RetryPolicy retry, http::RetryNotice notice)
    : transport_(transport), endpoint_(std::move(endpoint)), token_(std::move(token)),
      repo_type_(repo_type), repo_id_(std::move(repo_id)), retry_(retry), notice_(std::move(notice)) {
  while (endpoint_.ends_with('/')) endpoint_.pop_back();
}

std::string HubSession::api_base() const {
  return endpoint_ + "/api/" + std::string(api_segment(repo_type_)) + "/" + repo_id_;
}

Expected<http::Response> HubSession::call(Request request, bool retry) {
  // The token goes only to the Hub's own host, never to a storage URL an answer names.
  if (!token_.empty() && http::is_hub_host(request.url, endpoint_))
    request.headers.emplace_back("Authorization", "Bearer " + token_);
  if (!retry) return transport_.perform(request);
  return http::send_with_retries(transport_, request, retry_, notice_);
}

Error HubSession::http_error(const Request& request, const http::Response& r) const {
  return http::hub_error(request.method, request.url, r, http::ErrorContext{repo_id_, {}, {}, /*write=*/true});
}

Expected<std::string> HubSession::whoami() {
  const Request req = request("GET", endpoint_ + "/api/whoami-v2");
  KHUB_TRY(auto r, call(req, true));
  if (r.status != 200) return http_error(req, r);
  Json j = json_fields::parse_untrusted(r.body);
  const std::string name = text(j, "name");
  if (name.empty()) return Error(ErrorCode::Protocol, "GET " + req.url + ": no user name in the answer");
  return name;
}

Status HubSession::create_repo(bool is_private) {
  auto slash = repo_id_.find('/');
  Json body = {{"name", repo_id_.substr(slash + 1)}, {"organization", repo_id_.substr(0, slash)},
               {"type", to_string(repo_type_)}, {"private", is_private}};
  const Request req = request("POST", endpoint_ + "/api/repos/create", {{"Content-Type", "application/json"}}, body.dump());
  KHUB_TRY(auto r, call(req, true));
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
  const Request req = request("GET", api_base() + "/refs");
  KHUB_TRY(auto r, call(req, true));
  if (r.status != 200) return http_error(req, r);
  Json j = json_fields::parse_untrusted(r.body);
  if (!j.is_object()) return Error(ErrorCode::Protocol, "GET " + req.url + ": response is not a JSON object");
  std::map<std::string, std::string> out;
  const Json& list = field(j, "branches");
  // A refs answer without a branch list must not read as "no branches" (push would create one).
  if (!list.is_array()) return Error(ErrorCode::Protocol, "GET " + req.url + ": `branches` is not a list");
  for (const auto& b : list) {
    if (b.is_object() && b.contains("name") && b["name"].is_string()) {
      out[b["name"].get<std::string>()] = text(b, "targetCommit");
    }
  }
  return out;
}

Status HubSession::create_branch(const std::string& branch) {
  const Request req =
      request("POST", api_base() + "/branch/" + encode_segment(branch), {{"Content-Type", "application/json"}}, "{}");
  KHUB_TRY(auto r, call(req, true));
  if (r.status == 200 || r.status == 201 || r.status == 409) return {};
  return http_error(req, r);
}

Status HubSession::delete_branch(const std::string& branch) {
  const Request req = request("DELETE", api_base() + "/branch/" + encode_segment(branch));
  KHUB_TRY(auto r, call(req, true));
  if (r.status == 200 || r.status == 204 || r.status == 404) return {};
  return http_error(req, r);
}

Expected<std::vector<RemoteFile>> HubSession::list_files(const std::string& revision) {
  std::vector<RemoteFile> out;
  for (http::Pages pages(api_base() + "/tree/" + encode_segment(revision) + "?recursive=true&expand=false");;) {
    const std::string& url = pages.url();
    const Request req = request("GET", url);
    KHUB_TRY(auto r, call(req, true));
    if (r.status != 200) return http_error(req, r);
    Json j = json_fields::parse_untrusted(r.body);
    if (!j.is_array()) return Error(ErrorCode::Protocol, "GET " + url + ": tree is not a JSON array");
    KHUB_CHECK(pages.add_entries(j.size()));
    for (const auto& e : j) {
      if (text(e, "type") != "file") continue;
      RemoteFile f{text(e, "path"), text(e, "oid"), std::nullopt, std::nullopt, 0};
      if (const Json& size = field(e, "size"); size.is_number_unsigned()) f.size = size.get<std::uint64_t>();
      if (field(e, "lfs").is_object()) f.lfs_oid = text(e["lfs"], "oid");
      if (const std::string xet = text(e, "xetHash"); !xet.empty()) f.xet_hash = xet;
      out.push_back(std::move(f));
    }
    KHUB_TRY(bool more, pages.advance(r));
    if (!more) break;
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
    const Request req = request("POST", api_base() + "/preupload/" + encode_segment(revision) + (create_pr ? "?create_pr=1" : ""),
                                {{"Content-Type", "application/json"}}, Json{{"files", list}}.dump());
    KHUB_TRY(auto r, call(req, true));
    if (r.status != 200) return http_error(req, r);
    Json j = json_fields::parse_untrusted(r.body);
    if (!j.is_object() || !j.contains("files")) return Error(ErrorCode::Protocol, "preupload: malformed response");
    if (!j["files"].is_array()) return Error(ErrorCode::Protocol, "preupload: malformed response");
    for (const auto& f : j["files"]) {
      // An entry without a string path or mode would default every file to a regular upload.
      if (!f.is_object() || !field(f, "path").is_string() || !field(f, "uploadMode").is_string()) {
        return Error(ErrorCode::Protocol, "preupload: an answer entry lacks its path or uploadMode");
      }
      PreuploadInfo info;
      info.lfs = text(f, "uploadMode") == "lfs";
      info.should_ignore = flag(f, "shouldIgnore");
      if (auto oid = text(f, "oid"); !oid.empty()) info.oid = oid;
      out[text(f, "path")] = info;
    }
  }
  return out;
}

Expected<std::vector<LfsAction>> HubSession::lfs_batch(const std::vector<const LocalFile*>& files,
                                                      const std::optional<std::string>& ref) {
  const std::string prefix(url_prefix(repo_type_));
  Json objects = Json::array();
  for (const auto* f : files) objects.push_back({{"oid", f->sha256}, {"size", f->size}});
  Json body = {{"operation", "upload"}, {"transfers", {"basic", "multipart"}}, {"objects", objects},
               {"hash_algo", "sha256"}};
  if (ref) body["ref"] = {{"name", *ref}};
  const Request req = request("POST", endpoint_ + "/" + prefix + repo_id_ + ".git/info/lfs/objects/batch",
                              {{"Accept", kLfsContentType}, {"Content-Type", kLfsContentType}}, body.dump());
  KHUB_TRY(auto r, call(req, true));
  if (r.status != 200) return http_error(req, r);
  Json j = json_fields::parse_untrusted(r.body);
  if (!j.is_object() || !j.contains("objects")) return Error(ErrorCode::Protocol, "LFS batch: malformed response");
  std::vector<LfsAction> out;
  if (!j["objects"].is_array()) return Error(ErrorCode::Protocol, "LFS batch: malformed response");
  for (const auto& o : j["objects"]) {
    LfsAction a;
    a.oid = text(o, "oid");
    if (o.contains("error")) {
      return Error(ErrorCode::Protocol, "LFS batch refused object " + a.oid + ": " +
                                            (text(o["error"], "message").empty() ? o["error"].dump() : text(o["error"], "message")));
    }
    const Json& actions = field(o, "actions");
    if (field(actions, "upload").is_object()) {
      const Json& up = field(actions, "upload");
      a.needs_upload = true;
      a.upload_href = text(up, "href");
      a.upload_headers = json_headers(field(up, "header"));
      const Json& verify = field(actions, "verify");
      a.verify_href = text(verify, "href");
      a.verify_headers = json_headers(field(verify, "header"));
      if (a.upload_href.empty()) return Error(ErrorCode::Protocol, "LFS batch: upload action without href");
    }
    out.push_back(std::move(a));
  }
  return out;
}

Expected<std::uint64_t> HubSession::lfs_upload(const LocalFile& file, const LfsAction& action) {
  std::uint64_t sent = 0;
  std::string chunk_size;
  std::vector<std::pair<std::uint64_t, std::string>> parts;
  Headers plain;
  for (const auto& [k, v] : action.upload_headers) {
    if (k == "chunk_size") {
      chunk_size = v;
    } else if (!k.empty() && std::all_of(k.begin(), k.end(), ::isdigit)) {
      // Part URLs go in the order of their numbers, as huggingface_hub sorts them (int(key)).
      auto number = parse_decimal_u64(k);
      if (!number) {
        return Error(ErrorCode::Protocol, "LFS multipart for " + file.repo_path + ": part number " +
                                              k.substr(0, 40) + " is beyond 2^64");
      }
      parts.emplace_back(*number, v);
    } else {
      plain.emplace_back(k, v);
    }
  }
  if (chunk_size.empty()) {
    Request put = request("PUT", action.upload_href, plain);
    put.file = http::FileSlice{file.source, 0, file.size};
    KHUB_TRY(auto r, call(put, true));
    if (r.status < 200 || r.status >= 300) return http_error(put, r);
    sent = file.size;
  } else {
    const std::uint64_t chunk = parse_decimal_u64(chunk_size).value_or(0);
    std::sort(parts.begin(), parts.end());
    if (chunk == 0 || parts.size() != file.size / chunk + (file.size % chunk != 0)) {
      return Error(ErrorCode::Protocol, "LFS multipart for " + file.repo_path + ": " + std::to_string(parts.size()) +
                                            " part URLs for " + std::to_string(file.size) + " bytes in chunks of " +
                                            chunk_size);
    }
    Json completed = Json::array();
    for (std::size_t i = 0; i < parts.size(); ++i) {
      std::uint64_t offset = i * chunk, len = std::min(chunk, file.size - offset);
      Request put = request("PUT", parts[i].second);
      put.file = http::FileSlice{file.source, offset, len};
      KHUB_TRY(auto r, call(put, true));
      if (r.status < 200 || r.status >= 300) return http_error(put, r);
      completed.push_back({{"partNumber", parts[i].first}, {"etag", r.header("ETag")}});
      sent += len;
    }
    const Request done = request("POST", action.upload_href, {{"Accept", kLfsContentType}, {"Content-Type", kLfsContentType}},
                                 Json{{"oid", file.sha256}, {"parts", completed}}.dump());
    KHUB_TRY(auto r, call(done, true));
    if (r.status < 200 || r.status >= 300) return http_error(done, r);
  }
  if (!action.verify_href.empty()) {
    Headers h = action.verify_headers;
    h.emplace_back("Accept", kLfsContentType);
    h.emplace_back("Content-Type", kLfsContentType);
    const Request verify = request("POST", action.verify_href, h, Json{{"oid", file.sha256}, {"size", file.size}}.dump());
    KHUB_TRY(auto r, call(verify, true));
    if (r.status < 200 || r.status >= 300) return http_error(verify, r);
  }
  return sent;
}

Expected<std::optional<xet::CasConnection>> HubSession::xet_write_token(const std::string& revision, bool create_pr) {
  const Request req = request("GET", api_base() + "/xet-write-token/" + encode_segment(revision) +
                                         (create_pr ? "?create_pr=1" : ""));
  KHUB_TRY(auto r, call(req, true));
  if (r.status != 200) return std::optional<xet::CasConnection>();
  auto cas = xet::parse_cas_connection(r.body, r.header("X-Xet-Cas-Url"), r.header("X-Xet-Access-Token"),
                                       r.header("X-Xet-Token-Expiration"));
  if (!cas) return Error(cas.error().code, "GET " + req.url + ": " + cas.error().message);
  return std::optional(std::move(cas).value());
}

Expected<CommitOutcome> HubSession::commit(const std::string& revision, const std::string& ndjson, bool create_pr) {
  const Request req = request("POST", api_base() + "/commit/" + encode_segment(revision) + (create_pr ? "?create_pr=1" : ""),
                              {{"Content-Type", "application/x-ndjson"}}, ndjson);
  KHUB_TRY(auto r, call(req, false));
  if (r.status != 200 && r.status != 201) return http_error(req, r);
  Json j = json_fields::parse_untrusted(r.body);
  if (!j.is_object()) return Error(ErrorCode::Protocol, "commit: response is not a JSON object");
  CommitOutcome out;
  out.commit_oid = text(j, "commitOid");
  // The commit the push reports and pins: a missing or malformed id is not a successful upload.
  if (!is_commit_hash(out.commit_oid)) {
    return Error(ErrorCode::Protocol, "commit: the Hub answered no commit id (`commitOid`)");
  }
  out.pr_url = text(j, "pullRequestUrl");
  if (auto pos = out.pr_url.rfind("/discussions/"); pos != std::string::npos) {
    // The digits after it (a query may follow) name refs/pr/<n>, where the push's later batches go.
    const std::string_view tail = std::string_view(out.pr_url).substr(pos + 13);
    const auto number = parse_decimal_u64(tail.substr(0, tail.find_first_not_of("0123456789")));
    if (!number || *number > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      return Error(ErrorCode::Protocol, "commit: pullRequestUrl " + one_printable_line(out.pr_url) +
                                            " names no pull request number");
    }
    out.pr_number = static_cast<int>(*number);
  }
  return out;
}

}  // namespace khub::publish::detail
