#include "cas_session.h"

#include <chrono>

#include "khub/http/hub_answers.h"
#include "khub/json/fields.h"

namespace khub::publish::detail {
namespace {

std::uint64_t unix_now() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

http::Request cas_request(std::string method, std::string url, std::size_t max_body = std::size_t{4} << 20) {
  http::Request r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.total_timeout = std::chrono::minutes(10);  // a 64 MiB xorb on a slow uplink
  r.max_body = max_body;
  return r;
}

// `response.url` is the full URL that answered (requests name only the CAS path until sent).
Error cas_error(const http::Request& request, const http::Response& response) {
  return http::hub_error(request.method, response.url.empty() ? request.url : response.url, response,
                         http::ErrorContext{{}, {}, {}, /*write=*/true});
}

}  // namespace

CasSession::CasSession(http::Transport& transport, xet::CasConnection connection, Renew renew,
                       http::RetryPolicy retry, http::RetryNotice notice)
    : transport_(transport), connection_(std::move(connection)), renew_(std::move(renew)), retry_(retry),
      notice_(std::move(notice)) {}

Expected<xet::CasConnection> CasSession::current() {
  std::lock_guard lock(mutex_);
  if (connection_.expiring(unix_now())) {
    KHUB_TRY(auto fresh, renew_());
    connection_ = std::move(fresh);
  }
  return connection_;
}

Expected<http::Response> CasSession::send(http::Request& request) {
  KHUB_TRY(auto cas, current());
  request.url = cas.cas_url + request.url;
  request.headers.emplace_back("Authorization", "Bearer " + cas.access_token);
  return http::send_with_retries(transport_, request, retry_, notice_);
}

Expected<std::optional<xet::Shard>> CasSession::find_chunk(const xet::Hash& chunk) {
  auto req = cas_request("GET", "/v1/chunks/default/" + chunk.str(), std::size_t{64} << 20);
  KHUB_TRY(auto r, send(req));
  // 404: not known; other refusals (a CAS without global dedup) only cost the dedup.
  if (r.status != 200) return std::optional<xet::Shard>();
  auto shard = xet::read_shard(std::as_bytes(std::span(r.body)));
  if (!shard) return Error(ErrorCode::Protocol, "GET " + r.url + ": " + shard.error().message);
  return std::optional(std::move(shard).value());
}

Expected<std::optional<xet::Reconstruction>> CasSession::reconstruction(const xet::Hash& file, std::uint64_t size) {
  auto req = cas_request("GET", "/v1/reconstructions/" + file.str(), std::size_t{64} << 20);
  req.headers.emplace_back("Range", "bytes=0-" + std::to_string(size - 1));  // as hf_xet always asks
  KHUB_TRY(auto r, send(req));
  if (r.status == 404) return std::optional<xet::Reconstruction>();
  if (r.status != 200) return cas_error(req, r);
  auto parsed = xet::parse_reconstruction(r.body);
  if (!parsed) return Error(ErrorCode::Protocol, "GET " + r.url + ": " + parsed.error().message);
  return std::optional(std::move(parsed).value());
}

Expected<std::string> CasSession::fetch(const xet::FetchInfo& where) {
  const std::uint64_t length = where.byte_end - where.byte_start + 1;
  auto req = cas_request("GET", where.url, length);
  req.headers.emplace_back("Range", "bytes=" + std::to_string(where.byte_start) + "-" + std::to_string(where.byte_end));
  KHUB_TRY(auto r, http::send_with_retries(transport_, req, retry_, notice_));
  if (!r.ok()) return cas_error(req, r);
  if (r.body.size() != length) {
    return Error(ErrorCode::Protocol, "GET " + r.url + ": " + std::to_string(r.body.size()) + " bytes for a range of " +
                                          std::to_string(length));
  }
  return std::move(r.body);
}

Expected<bool> CasSession::upload_xorb(const xet::Hash& xorb, std::span<const std::byte> records) {
  auto req = cas_request("POST", "/v1/xorbs/default/" + xorb.str());
  req.headers.emplace_back("Content-Type", "application/octet-stream");
  req.borrowed_body = records;
  KHUB_TRY(auto r, send(req));
  if (!r.ok()) return cas_error(req, r);
  // Any 2xx stored it; `was_inserted: false` says it was there already (not an error).
  const auto answer = json_fields::parse_untrusted(r.body, 2);
  const auto& inserted = json_fields::field(answer, "was_inserted");
  return !(inserted.is_boolean() && !inserted.get<bool>());
}

Status CasSession::upload_shard(const std::string& shard) {
  auto req = cas_request("POST", "/v1/shards");
  req.headers.emplace_back("Content-Type", "application/octet-stream");
  req.body = shard;
  KHUB_TRY(auto r, send(req));
  if (!r.ok()) return cas_error(req, r);
  return {};
}

}  // namespace khub::publish::detail
