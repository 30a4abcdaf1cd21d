#include "khub/localhub/config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

#include "khub/json/fields.h"

namespace khub::localhub {

namespace {
using nlohmann::json;

Error bad(std::string what) { return Error(ErrorCode::InvalidArgument, "config: " + std::move(what)); }

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

Expected<std::vector<std::string>> string_list(const json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_array()) return bad(std::string(key) + " must be a list of strings");
  for (const auto& v : j[key]) {
    if (!v.is_string()) return bad(std::string(key) + " must be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

Status read_size(const json& j, const char* key, std::uint64_t& out) {
  if (!j.contains(key)) return {};
  if (!j[key].is_number_unsigned() || j[key].get<std::uint64_t>() == 0) {
    return bad(std::string(key) + " must be a positive integer");
  }
  out = j[key].get<std::uint64_t>();
  return {};
}
// A misspelt key must not be ignored: `"tokns"` would start a server without tokens (open to
// anyone), `"acess"` would make a read token.
Status known_keys(const json& obj, std::initializer_list<std::string_view> keys, const std::string& where) {
  for (const auto& item : obj.items()) {
    if (std::find(keys.begin(), keys.end(), item.key()) != keys.end()) continue;
    std::string list;
    for (auto k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
    return bad("unknown key \"" + item.key() + "\"" + where + " (known: " + list + ")");
  }
  return {};
}
}  // namespace

Expected<ServerConfig> parse_config(std::string_view text) {
  json j = json_fields::parse_untrusted(text);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  KHUB_CHECK(known_keys(j, {"anonymous_read", "trusted_orgs", "tokens", "lfs_chunk_size", "max_regular_file",
                            "max_commit_body", "max_object_size", "blob_base_url", "resolve_cache_redirects", "faults",
                            "organizations"},
                        ""));
  ServerConfig c;
  if (j.contains("anonymous_read")) {
    if (!j["anonymous_read"].is_boolean()) return bad("anonymous_read must be true or false");
    c.anonymous_read = j["anonymous_read"].get<bool>();
  }
  KHUB_TRY(c.trusted_orgs, string_list(j, "trusted_orgs"));
  if (j.contains("tokens")) {
    if (!j["tokens"].is_array()) return bad("tokens must be a list");
    for (const auto& t : j["tokens"]) {
      if (!t.is_object() || !t.contains("token") || !t["token"].is_string() || t["token"].get<std::string>().empty()) {
        return bad("each tokens entry needs a non-empty \"token\" string");
      }
      KHUB_CHECK(known_keys(t, {"token", "user", "fullname", "access", "orgs", "namespaces"}, " in a tokens entry"));
      TokenGrant g;
      g.token = t["token"].get<std::string>();
      if (t.contains("user")) {
        if (!t["user"].is_string()) return bad("tokens[].user must be a string");
        g.user = t["user"].get<std::string>();
      }
      if (t.contains("fullname")) {
        if (!t["fullname"].is_string()) return bad("tokens[].fullname must be a string");
        g.fullname = t["fullname"].get<std::string>();
      }
      const std::string access = t.contains("access") ? (t["access"].is_string() ? t["access"].get<std::string>() : "")
                                                      : std::string("read");
      if (access != "read" && access != "write") return bad("tokens[].access must be \"read\" or \"write\"");
      g.write = access == "write";
      KHUB_TRY(g.orgs, string_list(t, "orgs"));
      KHUB_TRY(g.namespaces, string_list(t, "namespaces"));
      c.tokens.push_back(std::move(g));
    }
  }
  if (j.contains("organizations")) {
    if (!j["organizations"].is_array()) return bad("organizations must be a list");
    for (const auto& o : j["organizations"]) {
      if (!o.is_object() || !o.contains("name") || !o["name"].is_string() || o["name"].get<std::string>().empty()) {
        return bad("each organizations entry needs a non-empty \"name\" string");
      }
      KHUB_CHECK(known_keys(o, {"name", "fullname", "private_by_default"}, " in an organizations entry"));
      Organization org;
      org.name = o["name"].get<std::string>();
      if (o.contains("fullname")) {
        if (!o["fullname"].is_string()) return bad("organizations[].fullname must be a string");
        org.fullname = o["fullname"].get<std::string>();
      }
      if (o.contains("private_by_default")) {
        if (!o["private_by_default"].is_boolean()) return bad("organizations[].private_by_default must be true or false");
        org.private_by_default = o["private_by_default"].get<bool>();
      }
      c.organizations.push_back(std::move(org));
    }
  }
  KHUB_CHECK(read_size(j, "lfs_chunk_size", c.lfs_chunk_size));
  KHUB_CHECK(read_size(j, "max_regular_file", c.max_regular_file));
  KHUB_CHECK(read_size(j, "max_commit_body", c.max_commit_body));
  KHUB_CHECK(read_size(j, "max_object_size", c.max_object_size));
  if (j.contains("blob_base_url")) {
    if (!j["blob_base_url"].is_string()) return bad("blob_base_url must be a string");
    c.blob_base_url = j["blob_base_url"].get<std::string>();
  }
  if (j.contains("resolve_cache_redirects")) {
    if (!j["resolve_cache_redirects"].is_boolean()) return bad("resolve_cache_redirects must be true or false");
    c.resolve_cache_redirects = j["resolve_cache_redirects"].get<bool>();
  }
  KHUB_TRY(auto faults, string_list(j, "faults"));
  for (const auto& f : faults) {
    KHUB_TRY(auto rule, parse_fault(f));
    c.faults.push_back(std::move(rule));
  }
  return c;
}

const Organization* ServerConfig::find_organization(std::string_view name) const {
  for (const auto& o : organizations) {
    if (o.name.size() == name.size() &&
        std::equal(o.name.begin(), o.name.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      return &o;
    }
  }
  return nullptr;
}

Expected<ServerConfig> load_config(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error(ErrorCode::Io, "cannot read config file " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  auto c = parse_config(text.str());
  if (!c) return Error(c.error().code, file.string() + ": " + c.error().message);
  return c;
}

Expected<TokenGrant> parse_token_flag(std::string_view flag) {
  TokenGrant g;
  g.write = true;
  auto colon = flag.rfind(':');
  std::string_view token = flag;
  if (colon != std::string_view::npos) {
    auto right = flag.substr(colon + 1);
    if (right != "read" && right != "write")  // a typo must not make a write token
      return Error(ErrorCode::InvalidArgument, "--token: unknown access '" + std::string(right) + "' in '" +
                                                   std::string(flag) + "'; use TOKEN, TOKEN:read or TOKEN:write");
    g.write = right == "write";
    token = flag.substr(0, colon);
  }
  if (token.empty()) return Error(ErrorCode::InvalidArgument, "--token: empty token");
  g.token = token;
  return g;
}

Expected<FaultRule> parse_fault(std::string_view spec) {
  FaultRule r;
  if (auto c = spec.rfind(",count="); c != std::string_view::npos) {
    auto n = to_int(spec.substr(c + 7));
    if (!n || *n < 1) return Error(ErrorCode::InvalidArgument, "fault '" + std::string(spec) + "': bad count");
    r.count = *n;
    spec = spec.substr(0, c);
  }
  auto eq = spec.rfind('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Error(ErrorCode::InvalidArgument, "fault '" + std::string(spec) + "': expected PATTERN=ACTION[,count=N]");
  }
  r.pattern = spec.substr(0, eq);
  std::string_view action = spec.substr(eq + 1);
  auto fail = [&] {
    return Error(ErrorCode::InvalidArgument,
                 "fault '" + std::string(spec) +
                     "': unknown action (drop-mid-body, 500, 503, 429[:S], slow:MS, ignore-range, wrong-size, wrong-etag)");
  };
  if (action == "drop-mid-body") {
    r.action = FaultAction::DropMidBody;
  } else if (action == "ignore-range") {
    r.action = FaultAction::IgnoreRange;
  } else if (action == "wrong-size") {
    r.action = FaultAction::WrongSize;
  } else if (action == "wrong-etag") {
    r.action = FaultAction::WrongEtag;
  } else if (action.starts_with("slow:")) {
    auto ms = to_int(action.substr(5));
    if (!ms || *ms < 0) return fail();
    r.action = FaultAction::Slow;
    r.millis = *ms;
  } else if (action.starts_with("429")) {
    r.action = FaultAction::RateLimit;
    r.status = 429;
    if (action.size() > 3) {
      auto s = action[3] == ':' ? to_int(action.substr(4)) : std::nullopt;
      if (!s || *s < 0) return fail();
      r.seconds = *s;
    }
  } else if (auto code = to_int(action); code && *code >= 400 && *code <= 599) {
    r.action = FaultAction::Status;
    r.status = *code;
  } else {
    return fail();
  }
  return r;
}

}  // namespace khub::localhub
