// Backend override and the host JSON of `khub variants --host`.
#include "khub/variants/host.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <vector>

namespace khub::variants {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 8> kKeys = {"os",     "cpu",     "torch", "cxx11_abi",
                                                   "backend", "backend_version", "tvm_ffi", "macos"};
constexpr std::array<std::string_view, 2> kOptionalKeys = {"cuda_capability", "rocm_arch"};

Error bad(std::string message) { return Error(ErrorCode::InvalidArgument, "host json: " + std::move(message)); }

Expected<std::optional<Version>> optional_version(const Json& obj, std::string_view key) {
  const Json& v = obj.at(std::string(key));
  if (v.is_null()) return std::optional<Version>();
  if (v.is_string()) {
    if (auto parsed = parse_dotted_version(v.get<std::string>())) return std::optional<Version>(parsed);
  }
  return bad("'" + std::string(key) + "' must be a version string like \"2.12\" or null, got " + v.dump());
}

Expected<std::string> string_in(const Json& obj, std::string_view key, const std::vector<std::string_view>& allowed) {
  const Json& v = obj.at(std::string(key));
  if (!v.is_string() || v.get<std::string>().empty()) {
    return bad("'" + std::string(key) + "' must be a non-empty string, got " + v.dump());
  }
  std::string s = v.get<std::string>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    return bad("'" + std::string(key) + "' must be one of " + list + ", got \"" + s + "\"");
  }
  return s;
}

Json version_json(const std::optional<Version>& v) { return v ? Json(v->str()) : Json(nullptr); }

}  // namespace

Expected<HostInfo> with_backend(HostInfo host, std::string_view backend) {
  const std::string_view detected = host.backend.name();
  if (backend == "cpu") {
    host.backend = Backend{BackendKind::Cpu, std::nullopt};
    return host;
  }
  if (backend == detected) return host;
  std::vector<std::string_view> supported{"cpu", detected};
  std::sort(supported.begin(), supported.end());
  supported.erase(std::unique(supported.begin(), supported.end()), supported.end());
  std::string list;
  for (std::string_view s : supported) list += (list.empty() ? "" : ", ") + std::string(s);
  return Error(ErrorCode::InvalidArgument,
               "Invalid backend '" + std::string(backend) + "', system supported backends: " + list);
}

Expected<HostInfo> host_from_json(std::string_view json_text) {
  Json obj;
  try {
    obj = Json::parse(json_text);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number beyond double
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, …"
    return bad("not valid JSON: " + what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2));
  }
  if (!obj.is_object()) return bad("expected an object, got " + std::string(obj.type_name()));
  for (std::string_view key : kKeys) {
    if (!obj.contains(std::string(key))) return bad("missing key '" + std::string(key) + "'");
  }
  for (const auto& item : obj.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), item.key()) == kKeys.end() &&
        std::find(kOptionalKeys.begin(), kOptionalKeys.end(), item.key()) == kOptionalKeys.end()) {
      return bad("unknown key '" + item.key() + "'");
    }
  }

  HostInfo host;
  KHUB_TRY(host.os, string_in(obj, "os", {"linux", "darwin", "windows"}));
  KHUB_TRY(host.cpu, string_in(obj, "cpu", {}));
  KHUB_TRY(host.torch, optional_version(obj, "torch"));
  const Json& abi = obj.at("cxx11_abi");
  if (!abi.is_null() && !abi.is_boolean()) return bad("'cxx11_abi' must be true, false or null, got " + abi.dump());
  if (abi.is_boolean()) host.cxx11_abi = abi.get<bool>();

  KHUB_TRY(std::string backend, string_in(obj, "backend", {"cpu", "cuda", "rocm", "xpu", "metal", "cann", "neuron", "tpu"}));
  host.backend.kind = *backend_kind_from_name(backend);
  KHUB_TRY(host.backend.version, optional_version(obj, "backend_version"));
  if (has_version(host.backend.kind) && !host.backend.version) {
    return bad("'backend_version' is required for backend \"" + backend + "\"");
  }
  if (!has_version(host.backend.kind) && host.backend.version) {
    return bad("'backend_version' must be null for backend \"" + backend + "\"");
  }
  KHUB_TRY(host.tvm_ffi, optional_version(obj, "tvm_ffi"));
  KHUB_TRY(host.macos, optional_version(obj, "macos"));
  if (obj.contains("cuda_capability")) {
    KHUB_TRY(host.cuda_capability, optional_version(obj, "cuda_capability"));
  }
  if (obj.contains("rocm_arch")) {
    const Json& arch = obj.at("rocm_arch");
    if (!arch.is_null() && (!arch.is_string() || arch.get<std::string>().empty()))
      return bad("'rocm_arch' must be a gfx name such as \"gfx942\" or null, got " + arch.dump());
    if (arch.is_string()) host.rocm_arch = arch.get<std::string>();
  }
  return host;
}

std::string host_to_json(const HostInfo& host, int indent) {
  Json obj;
  obj["os"] = host.os;
  obj["cpu"] = host.cpu;
  obj["torch"] = version_json(host.torch);
  obj["cxx11_abi"] = host.cxx11_abi ? Json(*host.cxx11_abi) : Json(nullptr);
  obj["backend"] = std::string(host.backend.name());
  obj["backend_version"] = version_json(host.backend.version);
  obj["tvm_ffi"] = version_json(host.tvm_ffi);
  obj["macos"] = version_json(host.macos);
  obj["cuda_capability"] = version_json(host.cuda_capability);
  obj["rocm_arch"] = host.rocm_arch ? Json(*host.rocm_arch) : Json(nullptr);
  return obj.dump(indent);
}

}  // namespace khub::variants
