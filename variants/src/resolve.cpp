// Acceptance, preference order and trace (docs/variants.md), as `kernels/variants.py` does
// them, plus khub's tie-break so the order never depends on the order of the input.
#include "khub/variants/resolve.h"

#include <algorithm>
#include <cassert>
#include <set>
#include <tuple>

namespace khub::variants {
namespace {

// Python's str() of an Optional[Version] / Optional[bool].
std::string py(const std::optional<Version>& v) { return v ? v->str() : "None"; }
std::string py(std::optional<bool> b) { return b ? (*b ? "True" : "False") : "None"; }

constexpr Version kMetalMinMacos{26, 0};

std::string framework_rejection(const Framework& f, const HostInfo& host) {
  switch (f.kind) {
    case FrameworkKind::Torch:
      if (!host.torch || f.version != *host.torch) {
        return "Torch version (" + f.version.str() + ") does not match environment Torch version (" +
               py(host.torch) + ")";
      }
      if (f.cxx11_abi && f.cxx11_abi != host.cxx11_abi) {
        return "Torch CXX11 ABI (" + py(f.cxx11_abi) + ") does not match environment Torch CXX11 ABI (" +
               py(host.cxx11_abi) + ")";
      }
      return {};
    case FrameworkKind::TorchStableAbi:
      if (!host.torch || f.version > *host.torch) {
        return "Torch stable ABI version (" + f.version.str() + ") is too new for environment Torch version (" +
               py(host.torch) + ")";
      }
      return {};
    case FrameworkKind::TvmFfi:
      if (!host.tvm_ffi || f.version != *host.tvm_ffi) {
        return "tvm-ffi version (" + f.version.str() + ") does not match environment tvm-ffi version (" +
               py(host.tvm_ffi) + ")";
      }
      return {};
  }
  return {};
}

std::string backend_rejection(const Backend& b, const HostInfo& host) {
  const Backend& hb = host.backend;
  if (hb.kind == BackendKind::Cuda && b.kind == BackendKind::Cuda) {
    assert(b.version && hb.version);
    if (b.version->major != hb.version->major || b.version->minor > hb.version->minor) {
      return "CUDA version (" + b.version->str() + ") is not compatible with system CUDA version (" +
             hb.version->str() + ")";
    }
    return {};
  }
  if (b.token() != hb.token()) {
    return "backend (" + b.token() + ") does not match selected backend (" + hb.token() + ")";
  }
  if (b.kind == BackendKind::Metal && (!host.macos || *host.macos < kMetalMinMacos)) {
    return "Metal kernels require macOS " + kMetalMinMacos.str() + " or later, system macOS version is " +
           py(host.macos);
  }
  return {};
}

// Sort key plus khub's tie-break (arch before noarch, then the name's bytes).
auto full_key(const Decision& d) { return std::make_tuple(sort_key(d), d.variant.is_arch() ? 0 : 1, d.name); }

}  // namespace

std::string_view noarch_backend_name(const Backend& backend) {
  return backend.kind == BackendKind::Cann ? "npu" : backend.name();
}

std::string rejection_reason(const Variant& variant, const HostInfo& host) {
  if (!variant.is_arch()) {
    const std::string& name = variant.noarch->backend_name;
    const std::string_view wanted = noarch_backend_name(host.backend);
    if (name != wanted && name != "universal") {
      return "backend (" + name + ") does not match system backend (" + std::string(wanted) +
             ") and is not universal";
    }
    return {};
  }
  const ArchVariant& a = *variant.arch;
  if (a.cpu != host.cpu) return "CPU (" + a.cpu + ") does not match system CPU (" + host.cpu + ")";
  if (a.os != host.os) return "OS (" + a.os + ") does not match system OS (" + host.os + ")";
  if (std::string r = framework_rejection(a.framework, host); !r.empty()) return r;
  return backend_rejection(a.backend, host);
}

std::array<int, 5> sort_key(const Decision& d) {
  const int decided = d.accepted ? 0 : 1;
  if (!d.variant.is_arch()) return {decided, 2, 0, 0, d.variant.noarch->is_universal() ? 1 : 0};
  const ArchVariant& a = *d.variant.arch;
  const int backend = has_version(a.backend.kind) && a.backend.version ? -a.backend.version->minor : 0;
  switch (a.framework.kind) {
    case FrameworkKind::TorchStableAbi:
      return {decided, 0, -a.framework.version.major, -a.framework.version.minor, backend};
    case FrameworkKind::Torch: return {decided, 1, 0, a.framework.cxx11_abi ? 1 : 0, backend};
    case FrameworkKind::TvmFfi: return {decided, 2, 0, 0, backend};
  }
  return {decided, 2, 0, 0, backend};
}

const Decision* Resolution::chosen() const {
  return !decisions.empty() && decisions.front().accepted ? &decisions.front() : nullptr;
}

std::vector<std::string> Resolution::accepted() const {
  std::vector<std::string> names;
  for (const Decision& d : decisions) {
    if (d.accepted) names.push_back(d.name);
  }
  return names;
}

std::string Resolution::trace() const {
  // Like upstream, every accepted variant equal to the best one is "preferred" (names that differ
  // only in leading zeros parse to equal variants).
  const Decision* best = chosen();
  std::string out;
  for (const Decision& d : decisions) {
    if (!out.empty()) out += '\n';
    out += d.variant.name();
    if (!d.accepted) out += ": " + d.reason;
    else if (best && d.variant == best->variant) out += " compatible, preferred \u2705";
    else out += " compatible \u2705";
  }
  return out;
}

Resolution resolve_parsed(std::vector<std::pair<std::string, Variant>> candidates, const HostInfo& host) {
  Resolution r;
  std::set<std::string> seen;
  for (auto& [name, variant] : candidates) {
    if (!seen.insert(name).second) continue;
    Decision d{std::move(variant), std::move(name), false, {}};
    d.reason = rejection_reason(d.variant, host);
    d.accepted = d.reason.empty();
    r.decisions.push_back(std::move(d));
  }
  std::sort(r.decisions.begin(), r.decisions.end(),
            [](const Decision& a, const Decision& b) { return full_key(a) < full_key(b); });
  return r;
}

Resolution resolve_variants(const std::vector<std::string>& candidates, const HostInfo& host,
                            std::vector<std::string>* unparsable) {
  std::vector<std::pair<std::string, Variant>> parsed;
  for (const std::string& name : candidates) {
    Expected<Variant> v = parse_variant(name);
    if (v) parsed.emplace_back(name, std::move(v).value());
    else if (unparsable) unparsable->push_back(name);
  }
  return resolve_parsed(std::move(parsed), host);
}

const Decision* first_loadable(const Resolution& resolution, NativeRuntime runtime) {
  for (const Decision& d : resolution.decisions) {
    if (!d.accepted || !d.variant.is_arch()) continue;
    FrameworkKind kind = d.variant.arch->framework.kind;
    if (runtime == NativeRuntime::TvmFfi ? kind == FrameworkKind::TvmFfi
                                         : kind == FrameworkKind::Torch || kind == FrameworkKind::TorchStableAbi)
      return &d;
  }
  return nullptr;
}

Expected<const Decision*> choose_loadable(const Resolution& resolution, std::string_view where,
                                          NativeRuntime runtime) {
  if (const Decision* d = first_loadable(resolution, runtime)) return d;
  Error error(ErrorCode::NoVariant, "Cannot find a build variant for this system in " + std::string(where));
  if (resolution.chosen()) {
    std::string names;
    for (const std::string& name : resolution.accepted()) names += (names.empty() ? "" : ", ") + name;
    error.message = "no variant in " + std::string(where) + " loads without Python: accepted " + names;
    error.hint = runtime == NativeRuntime::TvmFfi
                     ? "load it from Python with the `kernels` package, or publish a tvm-ffi build"
                     : "load it from Python with the `kernels` package, or publish a torch arch or stable-ABI build";
  }
  const std::string trace = resolution.trace();
  for (size_t start = 0; start < trace.size();) {
    size_t end = trace.find('\n', start);
    if (end == std::string::npos) end = trace.size();
    error.notes.push_back(trace.substr(start, end - start));
    start = end + 1;
  }
  return error;
}

}  // namespace khub::variants
