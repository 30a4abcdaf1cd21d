#include "khub/http/hub_answers.h"


#include <nlohmann/json.hpp>

#include "khub/base/redact.h"
#include "khub/base/url.h"
#include "khub/json/fields.h"

namespace khub::http {

std::string server_message(const Response& res) {
  if (auto m = res.header("x-error-message"); !m.empty()) return one_printable_line(m, 400);
  if (res.body.empty()) return {};
  const auto j = json_fields::parse_untrusted(res.body);
  if (!j.is_discarded() && j.is_object()) {
    std::string out;
    auto add = [&out](std::string_view sep, const std::string& text) { out += (out.empty() ? "" : std::string(sep)) + text; };
    if (auto e = j.find("error"); e != j.end()) {
      if (e->is_string()) add("; ", e->get<std::string>());
      else if (e->is_array())
        for (const auto& x : *e) add("; ", x.is_string() ? x.get<std::string>() : x.dump());
    }
    if (auto d = j.find("error_description"); d != j.end() && d->is_string()) add(": ", d->get<std::string>());
    if (auto list = j.find("errors"); list != j.end() && list->is_array())
      for (const auto& x : *list)
        if (x.is_object() && x.contains("message") && x["message"].is_string()) add("; ", x["message"].get<std::string>());
    if (!out.empty()) return one_printable_line(out, 400);
  }
  return server_text_line(res.body);
}

namespace {

bool is_repo_or_resolve_url(std::string_view url) {
  return url.find("/resolve/") != std::string_view::npos || url.find("/api/") != std::string_view::npos;
}

}  // namespace

Error hub_error(std::string_view method, std::string_view url, const Response& res, const ErrorContext& ctx) {
  const std::string code = res.header("x-error-code");
  const std::string msg = server_message(res);
  const std::string repo = ctx.repo_id.empty() ? std::string("the repository") : std::string(ctx.repo_id);
  const std::string request_id = res.header("x-request-id");
  const std::string where = " (" + std::string(method) + " " + redact(url) + ": " + std::to_string(res.status) +
                            (request_id.empty() ? "" : ", request id " + request_id) + ")";
  Error e;
  if (code == "RevisionNotFound") {
    e = Error(ErrorCode::RevisionNotFound, "revision '" + std::string(ctx.revision) + "' not found in " + repo + where,
              "check the branch, tag or commit; `khub versions " + repo + "` lists the versions");
  } else if (code == "EntryNotFound") {
    e = Error(ErrorCode::EntryNotFound,
              (ctx.path.empty() ? std::string("entry") : std::string(ctx.path)) + " not found in " + repo +
                  (ctx.revision.empty() ? "" : " at " + std::string(ctx.revision)) + where,
              "check the file name and the revision");
  } else if (code == "GatedRepo") {
    e = Error(ErrorCode::GatedRepo, repo + " is gated and this token has no access" + where,
              "ask for access on the repo page, then set HF_TOKEN to a token of an account that has it");
  } else if (msg == "Access to this resource is disabled.") {
    e = Error(ErrorCode::Forbidden, "access to " + repo + " is disabled" + where);
  } else if (code == "RepoNotFound" || (res.status == 401 && is_repo_or_resolve_url(url))) {
    if (msg == "Invalid credentials in Authorization header")
      e = Error(ErrorCode::Unauthorized, "the Hub rejected the token" + where,
                "set HF_TOKEN to a valid token (https://huggingface.co/settings/tokens)");
    else
      e = Error(ErrorCode::RepoNotFound, "repository " + repo + " not found" + where,
                ctx.write ? "check the repo id and that HF_TOKEN may write to it"
                          : "check the repo id; for a private repo set HF_TOKEN to a token with read access");
  } else if (res.status == 400) {
    e = Error(ErrorCode::InvalidArgument, "bad request" + where);
  } else if (res.status == 401) {
    e = Error(ErrorCode::Unauthorized, "authentication required" + where,
              ctx.write ? "set HF_TOKEN to a token with write access" : "set HF_TOKEN");
  } else if (res.status == 403) {
    e = Error(ErrorCode::Forbidden, "forbidden" + where,
              ctx.write ? "check that the token may write to " + repo : "check the token's permissions");
  } else if (res.status == 409 || res.status == 412) {
    e = Error(ErrorCode::Conflict, "conflict" + where, "someone else changed " + repo + " meanwhile; retry");
  } else if (res.status == 429) {
    e = Error(ErrorCode::RateLimited, "rate limited by the Hub after retries" + where,
              "wait a few minutes; an HF_TOKEN raises the quota");
  } else if (res.status == 416) {
    e = Error(ErrorCode::Protocol, "range not satisfiable" + where);
    if (auto cr = res.header("content-range"); !cr.empty()) e.note("content-range: " + cr);
  } else if (res.status >= 500) {
    e = Error(ErrorCode::Network, "server error" + where, "the Hub may be having trouble; retry later");
  } else {
    e = Error(ErrorCode::Protocol, "unexpected HTTP status" + where);
  }
  if (!msg.empty()) e.note("server: " + redact(msg));
  e.http_status = static_cast<int>(res.status);
  return e;
}

std::string link_with_rel(std::string_view link, std::string_view rel) {
  const std::string quoted = "rel=\"" + std::string(rel) + "\"", bare = "rel=" + std::string(rel);
  std::size_t pos = 0;
  while (pos < link.size()) {
    const auto lt = link.find('<', pos);
    if (lt == std::string_view::npos) return {};
    const auto gt = link.find('>', lt);
    if (gt == std::string_view::npos) return {};
    const auto end = link.find(',', gt);
    const auto params = link.substr(gt + 1, end == std::string_view::npos ? std::string_view::npos : end - gt - 1);
    const auto after_bare = params.find(bare);
    const bool bare_match = after_bare != std::string_view::npos &&
                            (after_bare + bare.size() == params.size() || params[after_bare + bare.size()] == ';' ||
                             params[after_bare + bare.size()] == ' ');
    if (params.find(quoted) != std::string_view::npos || bare_match)
      return std::string(link.substr(lt + 1, gt - lt - 1));
    if (end == std::string_view::npos) return {};
    pos = end + 1;
  }
  return {};
}

Status Pages::add_entries(std::size_t n) {
  entries_ += n;
  if (entries_ > max_entries_)
    return Error(ErrorCode::Protocol, "the listing at " + redact(url_) + " has more than " +
                                          std::to_string(max_entries_) + " entries",
                 "the server is not a Hugging Face Hub, or is misbehaving");
  return {};
}

Expected<bool> Pages::advance(const Response& response) {
  const std::string next = next_link(response.header("link"));
  if (next.empty()) return false;
  seen_.insert(url_);
  url_ = join_url(url_, next);
  if (seen_.contains(url_))
    return Error(ErrorCode::Protocol, "the listing at " + redact(url_) + " links back to a page already read",
                 "the server is not a Hugging Face Hub, or is misbehaving");
  if (static_cast<int>(seen_.size()) >= max_pages_)
    return Error(ErrorCode::Protocol, "the listing at " + redact(url_) + " runs past " + std::to_string(max_pages_) +
                                          " pages", "the server is not a Hugging Face Hub, or is misbehaving");
  return true;
}

bool is_hub_host(std::string_view url, std::string_view endpoint, const std::vector<std::string>& extra_hosts) {
  const std::string origin = url_origin(url), hub = url_origin(endpoint);
  if (origin.empty()) return false;  // not an absolute URL: no token
  if (origin == hub) return true;
  // Extra hub hosts only over the endpoint's own scheme: an https hub's token never goes out over http.
  const auto scheme = [](const std::string& o) { return o.substr(0, o.find("://")); };
  if (scheme(origin) != scheme(hub)) return false;
  for (const auto& host : extra_hosts)
    if (origin.size() > host.size() && origin.compare(origin.size() - host.size(), host.size(), host) == 0 &&
        origin[origin.size() - host.size() - 1] == '/')
      return true;
  return false;
}

}  // namespace khub::http
