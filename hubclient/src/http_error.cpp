// HTTP statuses → khub errors, in huggingface_hub's matching order (hub-protocol §2.9).
#include <nlohmann/json.hpp>

#include "client_impl.h"
#include "khub/base/redact.h"

namespace khub::hub {
namespace {

// The server's message: X-Error-Message, else the JSON `error` field(s), else the body text.
std::string server_message(const detail::HttpResponse& res) {
  if (auto m = res.header("x-error-message"); !m.empty()) return m;
  if (res.body.empty()) return {};
  auto j = nlohmann::json::parse(res.body, nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    std::string out;
    if (j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_string()) out = e.get<std::string>();
      else if (e.is_array())
        for (const auto& x : e) out += (out.empty() ? "" : "; ") + (x.is_string() ? x.get<std::string>() : x.dump());
    }
    if (j.contains("error_description") && j["error_description"].is_string())
      out += (out.empty() ? "" : ": ") + j["error_description"].get<std::string>();
    if (j.contains("errors") && j["errors"].is_array())
      for (const auto& x : j["errors"])
        if (x.is_object() && x.contains("message") && x["message"].is_string())
          out += (out.empty() ? "" : "; ") + x["message"].get<std::string>();
    if (!out.empty()) return out;
  }
  return server_text_line(res.body);
}

bool is_repo_or_resolve_url(const std::string& url) {
  return url.find("/resolve/") != std::string::npos || url.find("/api/") != std::string::npos;
}

}  // namespace

bool is_retryable_status(long status) noexcept {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

Error http_error(std::string_view method, const std::string& url, const detail::HttpResponse& res,
                 const ErrorContext& ctx) {
  const std::string code = res.header("x-error-code");
  const std::string msg = server_message(res);
  const std::string repo = ctx.repo ? ctx.repo->id : std::string("the repository");
  const std::string where = " (" + std::string(method) + " " + redact(url) + ": " + std::to_string(res.status) +
                            (res.header("x-request-id").empty() ? "" : ", request id " + res.header("x-request-id")) +
                            ")";
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
                "check the repo id; for a private repo set HF_TOKEN to a token with read access");
  } else if (res.status == 400) {
    e = Error(ErrorCode::InvalidArgument, "bad request" + where);
  } else if (res.status == 401) {
    e = Error(ErrorCode::Unauthorized, "authentication required" + where, "set HF_TOKEN");
  } else if (res.status == 403) {
    e = Error(ErrorCode::Forbidden, "forbidden" + where, "check the token's permissions");
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

}  // namespace khub::hub
