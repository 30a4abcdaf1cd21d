#include "xet_auth.h"

#include <charconv>
#include <chrono>
#include <vector>

#include "khub/base/hash.h"

namespace khub::localhub {

namespace {
// Tokens read "khubxet1.<r|w>.<repo rowid>.<expiry>.<hmac>"; the HMAC covers the three fields
// between, under a prefix no other signature of the server uses.
constexpr std::string_view kTokenPrefix = "khubxet1";

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string token_payload(std::string_view scope, std::string_view rowid, std::string_view exp) {
  return "xet-token:" + std::string(scope) + ":" + std::string(rowid) + ":" + std::string(exp);
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    auto at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// Digits only (no sign, no spaces): what the server wrote, nothing a parser might also accept.
std::optional<std::uint64_t> number(std::string_view text) {
  std::uint64_t v = 0;
  if (text.empty() || text.size() > 19) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string bearer(const httplib::Request& req) {
  static constexpr std::string_view kBearer = "bearer ";
  const std::string auth = req.get_header_value("Authorization");
  if (auth.size() <= kBearer.size()) return {};
  for (std::size_t i = 0; i < kBearer.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(auth[i])) != kBearer[i]) return {};
  return auth.substr(kBearer.size());
}
}  // namespace

XetToken mint_xet_token(const Hub& hub, const RepoRecord& repo, XetAccess access) {
  const std::string scope = access == XetAccess::Write ? "w" : "r";
  const std::string rowid = std::to_string(repo.rowid);
  XetToken t;
  t.expires = now_seconds() + hub.xet_token_seconds;
  const std::string exp = std::to_string(t.expires);
  t.token = std::string(kTokenPrefix) + "." + scope + "." + rowid + "." + exp + "." +
            hub.sign(token_payload(scope, rowid, exp));
  return t;
}

std::optional<RepoRecord> require_xet_access(const Hub& hub, const httplib::Request& req, httplib::Response& res,
                                             XetAccess need) {
  auto refuse = [&](int status, std::string_view message) {
    send_error(res, status, status == 401 ? "Unauthorized" : "Forbidden", message);
    return std::nullopt;
  };
  const std::string token = bearer(req);
  if (token.empty()) return refuse(401, "a Xet access token is required (get one from xet-read-token or xet-write-token)");
  const auto parts = split(token, '.');
  if (parts.size() != 5 || parts[0] != kTokenPrefix || (parts[1] != "r" && parts[1] != "w") ||
      !secrets_equal(parts[4], hub.sign(token_payload(parts[1], parts[2], parts[3])))) {
    return refuse(401, "invalid Xet access token");
  }
  const auto rowid = number(parts[2]);
  const auto exp = number(parts[3]);
  if (!rowid || !exp) return refuse(401, "invalid Xet access token");
  if (static_cast<std::int64_t>(*exp) < now_seconds()) return refuse(401, "Xet access token expired; refresh it");
  if (need == XetAccess::Write && parts[1] != "w") return refuse(403, "this Xet access token is read-only");
  auto repo = hub.store.find_repo_by_id(static_cast<std::int64_t>(*rowid));
  if (!repo) {
    if (repo.error().code == ErrorCode::RepoNotFound) return refuse(401, "the repo of this Xet access token is gone");
    send_error(res, repo.error());
    return std::nullopt;
  }
  return *repo;
}

std::string xorb_fetch_url(const Hub& hub, const httplib::Request& req, const xet::Hash& xorb, std::uint64_t first,
                           std::uint64_t last) {
  const std::string name = xorb.str();
  const std::string range = std::to_string(first) + "-" + std::to_string(last);
  const std::string exp = std::to_string(now_seconds() + kFetchUrlSeconds);
  return blob_base(hub, req) + "/v1/xorb-data/" + name + "?range=" + range + "&exp=" + exp +
         "&sig=" + hub.sign("xorb-data:" + name + ":" + range + ":" + exp);
}

std::optional<SignedRange> check_fetch_url(const Hub& hub, const httplib::Request& req, std::string_view xorb) {
  const auto range = req.get_param_value("range");
  const auto exp = req.get_param_value("exp");
  if (!hub.signed_by_us(req.get_param_value("sig"), "xorb-data:" + std::string(xorb) + ":" + range + ":" + exp))
    return std::nullopt;
  const auto expires = number(exp);
  if (!expires || static_cast<std::int64_t>(*expires) < now_seconds()) return std::nullopt;
  const auto bounds = split(range, '-');
  if (bounds.size() != 2) return std::nullopt;
  const auto first = number(bounds[0]), last = number(bounds[1]);
  if (!first || !last || *first > *last) return std::nullopt;
  return SignedRange{*first, *last};
}

}  // namespace khub::localhub
