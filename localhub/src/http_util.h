#pragma once
// Shared pieces of the HTTP layer: the per-server context handed to every route, identity and
// access checks, Hub-style error replies and URL helpers.
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/localhub/config.h"
#include "khub/localhub/store.h"

namespace khub::localhub {

struct Identity {
  const TokenGrant* grant = nullptr;  // null = anonymous
  bool bad_token = false;             // an Authorization header with an unknown token
};

/// Everything a route needs: the store, the configuration, the URL-signing secret.
struct Hub {
  RepoStore& store;
  const ServerConfig& config;
  std::string secret;
  int port = 0;
  std::int64_t xet_token_seconds = 3600;  // lifetime of the Xet access tokens the server mints

  [[nodiscard]] Identity identify(const httplib::Request& req) const;
  [[nodiscard]] bool open_mode() const { return config.tokens.empty(); }
  /// May `who` see `repo`? (Private repos need a token allowed in its namespace.)
  [[nodiscard]] bool can_read(const Identity& who, const RepoRecord& repo) const;
  [[nodiscard]] bool can_write(const Identity& who, std::string_view ns) const;
  /// May `who` download files of a gated repo? (Tokens allowed in its namespace, and users whose
  /// access request was accepted; "auto" or "manual".)
  [[nodiscard]] bool can_download_gated(const Identity& who, const RepoRecord& repo) const;
  /// HMAC-SHA256 of `payload` with the server secret, hex.
  [[nodiscard]] std::string sign(std::string_view payload) const;
  /// Whether `signature` is sign(payload), compared in constant time (no timing oracle on URLs).
  [[nodiscard]] bool signed_by_us(std::string_view signature, std::string_view payload) const;
};

/// A parsed request path: decoded segments plus the query.
struct Route {
  std::vector<std::string> segs;
};

/// Splits the raw request target path on '/' and percent-decodes each segment; nullopt when a
/// segment has a malformed escape.
[[nodiscard]] std::optional<Route> parse_route(std::string_view raw_target);

/// Writes `{"error": message}` with X-Error-Code / X-Error-Message (omitted when `code` is empty).
void send_error(httplib::Response& res, int status, std::string_view code, std::string_view message);
/// Maps a khub Error to the Hub's status and X-Error-Code.
void send_error(httplib::Response& res, const Error& error);
void send_json(httplib::Response& res, const nlohmann::json& body, int status = 200);

/// Rejects anonymous/bad-token/read-token writes: 401 or 403 already sent when it returns false.
bool require_write(const Hub& hub, const Identity& who, std::string_view ns, httplib::Response& res);
/// For writes whose namespace is in the body (repo create/delete): refuses, before the body is
/// read, a caller who may write nowhere (401 or 403 sent when it returns false).
bool require_some_write(const Hub& hub, const Identity& who, httplib::Response& res);
/// Finds a repo the caller may read; the 401/404 is already sent when it returns nullopt.
std::optional<RepoRecord> find_readable_repo(const Hub& hub, const Identity& who, const RepoKey& key,
                                             httplib::Response& res);

/// For gated repos: sends 401/403 GatedRepo and returns false when `who` may not download.
bool check_gate(const Hub& hub, const Identity& who, const RepoRecord& repo, httplib::Response& res);
/// A request body's fields that must have a JSON type when present (null counts as absent).
struct FieldType {
  const char* key;
  nlohmann::json::value_t type;  // value_t::number_unsigned accepts any non-negative integer
};
/// Sends 400 BadRequest naming the first field of `fields` present in `body` with another type,
/// and returns false; a client's `"private": "true"` must not quietly become a public repo.
bool check_field_types(const nlohmann::json& body, std::initializer_list<FieldType> fields, httplib::Response& res);
/// A string or boolean field: its value, or `fallback` when it is missing, null or of another type
/// (never throws, unlike nlohmann's value(), which throws on null).
std::string string_field(const nlohmann::json& body, const char* key, std::string fallback = {});
bool bool_field(const nlohmann::json& body, const char* key, bool fallback);

/// A whole-number query parameter: `fallback` when absent, nullopt (after a 400) when malformed or
/// outside [lowest, highest].
std::optional<std::size_t> count_param(const httplib::Request& req, httplib::Response& res, const char* name,
                                       std::size_t fallback, std::size_t lowest, std::size_t highest);
/// Reads the whole request body, up to `limit` bytes (413 PayloadTooLarge beyond).
Expected<std::string> read_body(const httplib::ContentReader& reader, std::uint64_t limit);

/// "http://<Host header>" (or the bound address when the client sent no Host).
[[nodiscard]] std::string base_url(const httplib::Request& req, int port);
/// Base URL for LFS blob and upload links: config.blob_base_url ("{port}" replaced) or base_url().
[[nodiscard]] std::string blob_base(const Hub& hub, const httplib::Request& req);
/// Percent-encodes everything but RFC 3986 unreserved characters (and '/' when keep_slash).
[[nodiscard]] std::string url_encode(std::string_view text, bool keep_slash);
/// fnmatch-style match: '*' matches any run including '/', '?' one character.
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace khub::localhub
