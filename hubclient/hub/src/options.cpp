// The one place that reads the environment: huggingface_hub's variables, names and precedence
// (listed in docs/cpp-api.md, `khub::hub`; docs/protocol.md, Offline mode and cache fallback, Cache
// layout, Tokens) and LOCAL_KERNELS.
#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "khub/base/environment.h"
#include "khub/base/text.h"
#include "khub/hub/options.h"

#ifndef KHUB_VERSION
#define KHUB_VERSION "0.0.0"
#endif

namespace khub::hub {
namespace fs = std::filesystem;
namespace {

fs::path cache_root() {
  for (const char* name : {"KERNELS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"})
    if (auto v = env_value(name); !v.empty()) return expand_user_and_vars(v);
  return hf_home() / "hub";
}

std::chrono::milliseconds seconds_from(const char* name, std::chrono::milliseconds fallback) {
  auto v = env_value(name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  double s = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || s <= 0) return fallback;
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

}  // namespace

// huggingface_hub: _is_true(HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE), so a set HF_HUB_OFFLINE decides.
bool offline_from_environment() {
  const auto hub = env_value("HF_HUB_OFFLINE");
  return is_truthy(!hub.empty() ? hub : env_value("TRANSFORMERS_OFFLINE"));
}

bool is_truthy(std::string_view value) noexcept {
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::toupper(c); });
  return v == "1" || v == "ON" || v == "YES" || v == "TRUE";
}

std::string_view khub_version() noexcept { return KHUB_VERSION; }

Expected<std::vector<std::pair<std::string, fs::path>>> parse_local_kernels(std::string_view value) {
  std::vector<std::pair<std::string, fs::path>> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    auto sep = value.find(':', start);
    auto entry = value.substr(start, sep == std::string_view::npos ? value.npos : sep - start);
    if (!entry.empty()) {
      auto eq = entry.find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == entry.size())
        return Error(ErrorCode::InvalidArgument,
                     "Invalid LOCAL_KERNELS entry: " + std::string(entry) +
                         ". Expected format: repo_id_1=path_1:repo_id_2=path_2");
      out.emplace_back(std::string(entry.substr(0, eq)), fs::path(std::string(entry.substr(eq + 1))));
    }
    if (sep == std::string_view::npos) break;
    start = sep + 1;
  }
  return out;
}

Expected<ClientOptions> ClientOptions::from_environment() {
  ClientOptions o;
  if (auto v = env_value("HF_ENDPOINT"); !v.empty()) {
    while (!v.empty() && v.back() == '/') v.pop_back();
    if (!v.starts_with("http://") && !v.starts_with("https://"))
      return Error(ErrorCode::InvalidArgument, "HF_ENDPOINT '" + v + "' is not an http:// or https:// URL",
                   "set it to the hub's address, e.g. http://127.0.0.1:8080, or unset it for huggingface.co");
    o.endpoint = v;
  }
  if (!is_truthy(env_value("HF_HUB_DISABLE_IMPLICIT_TOKEN"))) o.token = hf_token_from_environment();
  o.cache_dir = cache_root();
  o.offline = offline_from_environment();
  o.etag_timeout = seconds_from("HF_HUB_ETAG_TIMEOUT", o.etag_timeout);
  o.download_timeout = seconds_from("HF_HUB_DOWNLOAD_TIMEOUT", o.download_timeout);
  o.disable_symlinks = is_truthy(env_value("HF_HUB_DISABLE_SYMLINKS"));
  o.telemetry = !(is_truthy(env_value("HF_HUB_DISABLE_TELEMETRY")) || is_truthy(env_value("DISABLE_TELEMETRY")) ||
                  is_truthy(env_value("DO_NOT_TRACK")));
  o.user_agent_origin = env_value("HF_HUB_USER_AGENT_ORIGIN");
  o.trusted_cas = trusted_cas_from_environment();
  if (auto v = env_value("LOCAL_KERNELS"); !v.empty()) {
    KHUB_TRY(o.local_kernels, parse_local_kernels(v));
  }
  return o;
}

std::string render_user_agent(const ClientOptions& o) {
  std::vector<std::string> segments;
  auto add = [&](std::string s) {
    s = trim_space(s);
    if (!s.empty() && s.find('/') != std::string::npos) segments.push_back(std::move(s));
  };
  // Caller segments may come "; "-joined already.
  std::size_t start = 0;
  while (start < o.user_agent.size()) {
    auto sep = o.user_agent.find(';', start);
    add(o.user_agent.substr(start, sep == std::string::npos ? std::string::npos : sep - start));
    if (sep == std::string::npos) break;
    start = sep + 1;
  }
  add("khub/" + std::string(khub_version()));
  if (o.telemetry) {
    if (!o.ua_backend.empty()) add("backend/" + o.ua_backend);
    struct utsname u {};
    if (::uname(&u) == 0) {
      std::string sys = u.sysname;
      std::transform(sys.begin(), sys.end(), sys.begin(), [](unsigned char c) { return std::tolower(c); });
      add("platform/" + std::string(u.machine) + "-" + sys);
    }
    add("file_type/kernel");
    if (!o.ua_torch.empty()) add("torch/" + o.ua_torch);
  }
  if (!o.user_agent_origin.empty()) add("origin/" + o.user_agent_origin);
  std::string out;
  for (const auto& s : segments) out += (out.empty() ? "" : "; ") + s;
  return out;
}

}  // namespace khub::hub
