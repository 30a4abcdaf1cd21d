#include "http_util.h"

#include "connection.h"
#include "khub/base/redact.h"

#include <algorithm>
#include <cctype>

#include "khub/base/hash.h"
#include "khub/base/url.h"

namespace khub::localhub {

namespace {
bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}
}  // namespace

Identity Hub::identify(const httplib::Request& req) const {
  Identity who;
  auto auth = req.get_header_value("Authorization");
  if (auth.empty()) return who;
  constexpr std::string_view kBearer = "Bearer ";
  std::string_view token = auth;
  if (token.size() > kBearer.size() && equal_ignoring_case(token.substr(0, kBearer.size()), kBearer)) {
    token.remove_prefix(kBearer.size());
  } else {
    who.bad_token = true;
    return who;
  }
  // Every grant is compared, each in constant time: the answer's timing tells nothing of the tokens.
  for (const auto& g : config.tokens)
    if (secrets_equal(g.token, token) && !who.grant) who.grant = &g;
  if (who.grant) return who;
  // With no token configured every caller is trusted on loopback; an unknown token is ignored.
  who.bad_token = !open_mode();
  return who;
}

namespace {
// Namespaces are case-insensitive, as repo names are (RepoStore finds acme/x for ACME/x).
bool namespace_allowed(const TokenGrant& g, std::string_view ns) {
  if (g.namespaces.empty()) return true;
  return std::any_of(g.namespaces.begin(), g.namespaces.end(),
                     [&](const std::string& granted) { return equal_ignoring_case(granted, ns); });
}
}  // namespace

bool Hub::can_read(const Identity& who, const RepoRecord& repo) const {
  if (open_mode()) return true;
  if (who.bad_token) return false;
  if (!repo.is_private) return who.grant || config.anonymous_read;
  return who.grant && namespace_allowed(*who.grant, repo.key.ns);
}

bool Hub::can_write(const Identity& who, std::string_view ns) const {
  if (open_mode()) return true;
  return who.grant && who.grant->write && namespace_allowed(*who.grant, ns);
}

bool Hub::can_download_gated(const Identity& who, const RepoRecord& repo) const {
  // "auto" and "manual" alike: the repo's namespace, and users whose access request a writer
  // accepted (on the Hub "auto" accepts requests at once, but a user who never asked is refused).
  if (repo.gated.empty()) return true;
  if (!who.grant) return false;
  if (namespace_allowed(*who.grant, repo.key.ns)) return true;
  auto requests = store.access_requests(repo);
  return requests && std::any_of(requests->begin(), requests->end(), [&](const AccessRequest& r) {
           return r.status == "accepted" && equal_ignoring_case(r.user, who.grant->user);
         });
}

bool Hub::signed_by_us(std::string_view signature, std::string_view payload) const {
  const std::string expected = sign(payload);
  if (signature.size() != expected.size() || signature.empty()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) diff |= static_cast<unsigned char>(signature[i] ^ expected[i]);
  return diff == 0;
}

std::string Hub::sign(std::string_view payload) const {
  // HMAC (RFC 2104) over SHA-256.
  std::string key = secret;
  if (key.size() > 64) {
    auto d = from_hex(sha256_hex(key));
    key.assign(d.begin(), d.end());
  }
  key.resize(64, '\0');
  std::string ipad(64, 0), opad(64, 0);
  for (size_t i = 0; i < 64; ++i) {
    ipad[i] = static_cast<char>(key[i] ^ 0x36);
    opad[i] = static_cast<char>(key[i] ^ 0x5c);
  }
  Hasher inner(HashAlgorithm::Sha256);
  inner.update(ipad);
  inner.update(payload);
  auto ih = inner.finish();
  Hasher outer(HashAlgorithm::Sha256);
  outer.update(opad);
  outer.update(std::string_view(reinterpret_cast<const char*>(ih.data()), ih.size()));
  return to_hex(outer.finish());
}

std::optional<Route> parse_route(std::string_view target) {
  auto q = target.find('?');
  std::string_view path = target.substr(0, q);
  Route r;
  size_t start = 0;
  if (!path.empty() && path.front() == '/') start = 1;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string seg;
    for (size_t i = start; i < end; ++i) {
      if (path[i] == '%') {
        if (i + 2 >= end) return std::nullopt;
        auto bytes = from_hex(path.substr(i + 1, 2));
        if (bytes.size() != 1) return std::nullopt;
        seg.push_back(static_cast<char>(bytes[0]));
        i += 2;
      } else {
        seg.push_back(path[i]);
      }
    }
    r.segs.push_back(std::move(seg));
    if (end == path.size()) break;
    start = end + 1;
  }
  if (!r.segs.empty() && r.segs.back().empty() && r.segs.size() > 1) r.segs.pop_back();
  return r;
}

void send_error(httplib::Response& res, int status, std::string_view code, std::string_view message) {
  res.status = status;
  if (!code.empty()) res.set_header("X-Error-Code", std::string(code));
  res.set_header("X-Error-Message", one_printable_line(message, 300));  // names from requests: no control bytes
  res.set_content(nlohmann::json{{"error", std::string(message)}}.dump(-1, ' ', false,
                                                                        nlohmann::json::error_handler_t::replace),
                  "application/json");
}

void send_error(httplib::Response& res, const Error& e) {
  switch (e.code) {
    case ErrorCode::RepoNotFound: return send_error(res, 404, "RepoNotFound", "Repository not found");
    case ErrorCode::RevisionNotFound: return send_error(res, 404, "RevisionNotFound", e.message);
    case ErrorCode::EntryNotFound: return send_error(res, 404, "EntryNotFound", e.message);
    case ErrorCode::Conflict:
      if (e.http_status == 412) return send_error(res, 412, "PreconditionFailed", e.message);
      return send_error(res, 409, "Conflict", e.message);
    case ErrorCode::InvalidArgument:
    case ErrorCode::Integrity:
    case ErrorCode::Protocol:
      if (e.http_status == 413) return send_error(res, 413, "PayloadTooLarge", e.message);
      return send_error(res, 400, "BadRequest", e.message);
    case ErrorCode::Unauthorized: return send_error(res, 401, "Unauthorized", e.message);
    case ErrorCode::Forbidden: return send_error(res, 403, "Forbidden", e.message);
    default: return send_error(res, 500, "InternalError", e.message);
  }
}

void send_json(httplib::Response& res, const nlohmann::json& body, int status) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

bool require_write(const Hub& hub, const Identity& who, std::string_view ns, httplib::Response& res) {
  if (hub.can_write(who, ns)) return true;
  if (who.bad_token) {
    send_error(res, 401, "Unauthorized", "Invalid credentials in Authorization header");
  } else if (!who.grant) {
    send_error(res, 401, "Unauthorized", "You must be authenticated to write (pass a token with write access)");
  } else {
    send_error(res, 403, "Forbidden",
               "token of '" + who.grant->user + "' has no write access to namespace '" + std::string(ns) + "'");
  }
  return false;
}

bool require_some_write(const Hub& hub, const Identity& who, httplib::Response& res) {
  if (hub.open_mode() || (who.grant && who.grant->write)) return true;
  if (who.bad_token) {
    send_error(res, 401, "Unauthorized", "Invalid credentials in Authorization header");
  } else if (!who.grant) {
    send_error(res, 401, "Unauthorized", "You must be authenticated to write (pass a token with write access)");
  } else {
    send_error(res, 403, "Forbidden", "token of '" + who.grant->user + "' has no write access");
  }
  return false;
}

std::optional<RepoRecord> find_readable_repo(const Hub& hub, const Identity& who, const RepoKey& key,
                                             httplib::Response& res) {
  if (who.bad_token) {
    send_error(res, 401, "", "Invalid credentials in Authorization header");
    return std::nullopt;
  }
  auto repo = hub.store.find_repo(key);
  if (!repo) {
    send_error(res, repo.error());
    return std::nullopt;
  }
  if (!hub.can_read(who, *repo)) {
    if (!who.grant) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"Authentication required\", charset=\"UTF-8\"");
      send_error(res, 401, "", "Invalid username or password.");
    } else {
      send_error(res, 404, "RepoNotFound", "Repository not found");
    }
    return std::nullopt;
  }
  return *repo;
}

bool check_gate(const Hub& hub, const Identity& who, const RepoRecord& repo, httplib::Response& res) {
  if (hub.can_download_gated(who, repo)) return true;
  std::string kind(to_string(repo.key.type));
  if (!who.grant) {
    send_error(res, 401, "GatedRepo",
               "Access to " + kind + " " + repo.key.id() +
                   " is restricted. You must have access to it and be authenticated to access it. Please log in.");
  } else {
    send_error(res, 403, "GatedRepo",
               "Access to " + kind + " " + repo.key.id() +
                   " is restricted and you are not in the authorized list. Ask an administrator of this server for access.");
  }
  return false;
}

std::optional<std::size_t> count_param(const httplib::Request& req, httplib::Response& res, const char* name,
                                       std::size_t fallback, std::size_t lowest, std::size_t highest) {
  auto text = req.get_param_value(name);
  if (text.empty()) return fallback;
  char* end = nullptr;
  auto n = std::strtoull(text.c_str(), &end, 10);
  if (*end || text[0] == '-' || n < lowest || n > highest) {
    send_error(res, 400, "BadRequest", std::string(name) + " must be a whole number from " + std::to_string(lowest) +
                                           " to " + std::to_string(highest) + ", got '" + text + "'");
    return std::nullopt;
  }
  return static_cast<std::size_t>(n);
}

Expected<std::string> read_body(const httplib::ContentReader& reader, std::uint64_t limit) {
  std::string body;
  bool too_large = false;
  bool ok = reader([&](const char* data, size_t n) {
    if (body.size() + n > limit) {
      too_large = true;
      return false;
    }
    body.append(data, n);
    return true;
  });
  if (too_large) {
    Error e(ErrorCode::InvalidArgument, "request body larger than " + std::to_string(limit) + " bytes");
    e.http_status = 413;
    return e;
  }
  if (!ok) return Error(ErrorCode::Protocol, "request body could not be read");
  return body;
}

std::string base_url(const httplib::Request& req, int port) {
  auto host = req.get_header_value("Host");
  if (host.empty()) host = "127.0.0.1:" + std::to_string(port);
  return (GuardedServer::request_is_tls() ? "https://" : "http://") + host;
}

std::string blob_base(const Hub& hub, const httplib::Request& req) {
  std::string base = hub.config.blob_base_url.empty() ? base_url(req, hub.port) : hub.config.blob_base_url;
  if (auto p = base.find("{port}"); p != std::string::npos) base.replace(p, 6, std::to_string(hub.port));
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

std::string url_encode(std::string_view text, bool keep_slash) { return percent_encode(text, keep_slash); }

bool glob_match(std::string_view p, std::string_view t) {
  size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool check_field_types(const nlohmann::json& body, std::initializer_list<FieldType> fields, httplib::Response& res) {
  using T = nlohmann::json::value_t;
  if (!body.is_object()) return true;
  for (const auto& f : fields) {
    auto it = body.find(f.key);
    if (it == body.end() || it->is_null()) continue;
    const bool ok = f.type == T::number_unsigned ? it->is_number_unsigned() : it->type() == f.type;
    if (ok) continue;
    static constexpr const char* kNames[] = {"null", "an object", "an array", "a string", "a boolean",
                                             "an integer", "a non-negative integer", "a number"};
    const auto index = static_cast<std::size_t>(f.type);
    send_error(res, 400, "BadRequest",
               std::string("field '") + f.key + "' must be " + (index < std::size(kNames) ? kNames[index] : "another type"));
    return false;
  }
  return true;
}

std::string string_field(const nlohmann::json& body, const char* key, std::string fallback) {
  if (!body.is_object()) return fallback;
  auto it = body.find(key);
  return it != body.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool bool_field(const nlohmann::json& body, const char* key, bool fallback) {
  if (!body.is_object()) return fallback;
  auto it = body.find(key);
  return it != body.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

}  // namespace khub::localhub
