// manylinux_2_28 / abi3 / library / namespace rules over an ElfInfo.
#include "khub/publish/abi_check.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <map>
#include <set>

namespace khub::publish {
namespace {

struct StableAbiSymbol {
  const char* name;
  int major;
  int minor;
};

constexpr StableAbiSymbol kStableAbi[] = {
#include "stable_abi_symbols.inc"
};

// Torch C-shim functions added from 2.10 on, with the torch version that added each.
constexpr StableAbiSymbol kTorchShim[] = {
#include "torch_shim_versions.inc"
};

// auditwheel's manylinux_2_28 symbol-version lists, as kernel-abi-check 0.14 accepts them. The x86_64
// set was confirmed by probing kernel-abi-check with stub libraries carrying every version node of
// this machine's glibc, libstdc++, libgcc_s, libz and libatomic (see tests/publish/abi_interop_test.cpp).
const std::map<std::string, std::set<std::string>>& policy_x86_64() {
  static const std::map<std::string, std::set<std::string>> kPolicy = {
      {"GLIBC", {"2.2.5", "2.2.6", "2.3", "2.3.2", "2.3.3", "2.3.4", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10",
                 "2.11", "2.12", "2.13", "2.14", "2.15", "2.16", "2.17", "2.18", "2.22", "2.23", "2.24", "2.25",
                 "2.26", "2.27", "2.28"}},
      {"CXXABI", {"1.3", "1.3.1", "1.3.2", "1.3.3", "1.3.4", "1.3.5", "1.3.6", "1.3.7", "1.3.8", "1.3.9", "1.3.10",
                  "1.3.11", "TM_1", "FLOAT128"}},
      {"GLIBCXX", {"3.4", "3.4.1", "3.4.2", "3.4.3", "3.4.4", "3.4.5", "3.4.6", "3.4.7", "3.4.8", "3.4.9", "3.4.10",
                   "3.4.11", "3.4.12", "3.4.13", "3.4.14", "3.4.15", "3.4.16", "3.4.17", "3.4.18", "3.4.19", "3.4.20",
                   "3.4.21", "3.4.22", "3.4.23", "3.4.24"}},
      {"GCC", {"3", "3.3", "3.3.1", "3.4", "3.4.2", "3.4.4", "4", "4.2", "4.3", "4.4", "4.5", "4.7", "4.8", "7"}},
      {"LIBATOMIC", {"1", "1.1", "1.2"}},
      {"ZLIB", {"1.2", "1.2.0.2", "1.2.0.8", "1.2.2", "1.2.2.3", "1.2.2.4", "1.2.3.3", "1.2.3.4", "1.2.3.5",
                "1.2.5.1", "1.2.5.2", "1.2.7.1", "1.2.9"}},
  };
  return kPolicy;
}

// aarch64: same lists except glibc starts at 2.17 (the first aarch64 glibc) and there is no FLOAT128.
const std::map<std::string, std::set<std::string>>& policy_aarch64() {
  static const std::map<std::string, std::set<std::string>> kPolicy = [] {
    auto p = policy_x86_64();
    p["GLIBC"] = {"2", "2.17", "2.18", "2.22", "2.23", "2.24", "2.25", "2.26", "2.27", "2.28"};
    p["CXXABI"].erase("FLOAT128");
    return p;
  }();
  return kPolicy;
}

// "7.0.0" -> "7", "2.2.5" unchanged; non-numeric versions (TM_1) unchanged.
std::string normalise(std::string v) {
  while (v.size() > 2 && v.ends_with(".0")) v.resize(v.size() - 2);
  return v;
}

bool matches_prefix(std::string_view lib, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](auto p) { return lib.starts_with(p); });
}

// `_ZL22TORCH_LIBRARY_init_fooRN5torch7LibraryE` -> `TORCH_LIBRARY_init_foo`; plain names unchanged.
std::string demangled_identifier(std::string_view name) {
  if (!name.starts_with("_ZL") && !name.starts_with("_ZN")) return std::string(name);
  std::size_t i = 3, len = 0;
  if (i >= name.size() || name[i] < '0' || name[i] > '9') return std::string(name);
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') len = len * 10 + static_cast<std::size_t>(name[i++] - '0');
  if (i + len > name.size()) return std::string(name);
  return std::string(name.substr(i, len));
}

}  // namespace

std::optional<std::string> stable_abi_added(std::string_view symbol) {
  for (const auto& s : kStableAbi) {
    if (symbol == s.name) return std::to_string(s.major) + "." + std::to_string(s.minor);
  }
  return std::nullopt;
}

Expected<std::vector<ManylinuxViolation>> check_manylinux(const ElfInfo& elf, std::string_view policy) {
  if (policy != "manylinux_2_28") {
    return Error(ErrorCode::Unsupported, "unsupported manylinux policy `" + std::string(policy) + "`",
                 "khub checks manylinux_2_28 only");
  }
  const auto& table = elf.machine == "aarch64" ? policy_aarch64() : policy_x86_64();
  std::vector<ManylinuxViolation> out;
  for (const auto& s : elf.dynamic) {
    if (!s.undefined || s.version.empty()) continue;
    auto us = s.version.find('_');
    if (us == std::string::npos) continue;
    std::string dep = s.version.substr(0, us);
    std::string version = normalise(s.version.substr(us + 1));
    auto it = table.find(dep);
    if (it == table.end()) continue;
    std::set<std::string> allowed;
    for (const auto& v : it->second) allowed.insert(normalise(v));
    if (!allowed.contains(version)) out.push_back({s.name, dep, version});
  }
  return out;
}

std::string Abi3Violation::describe() const {
  if (!added) return "Non-ABI3 symbol: " + symbol;
  return symbol + ": added in Python " + *added;
}

std::vector<Abi3Violation> check_abi3(const ElfInfo& elf, int major, int minor) {
  std::vector<Abi3Violation> out;
  for (const auto& s : elf.dynamic) {
    if (!s.undefined) continue;
    if (!s.name.starts_with("Py") && !s.name.starts_with("_Py")) continue;
    auto added = stable_abi_added(s.name);
    if (!added) {
      out.push_back({s.name, std::nullopt});
      continue;
    }
    auto dot = added->find('.');
    int amaj = std::stoi(added->substr(0, dot)), amin = std::stoi(added->substr(dot + 1));
    if (amaj > major || (amaj == major && amin > minor)) out.push_back({s.name, added});
  }
  return out;
}

std::optional<std::string> torch_shim_added(std::string_view symbol) {
  for (const auto& s : kTorchShim) {
    if (symbol == s.name) return std::to_string(s.major) + "." + std::to_string(s.minor);
  }
  return std::nullopt;
}

std::string TorchStableAbiViolation::describe() const {
  if (!added) return "uses " + symbol + ", which is not part of the Torch stable ABI";
  return "uses " + symbol + ", added to torch's C shim in " + *added + ", after the stable-ABI target " + target;
}

std::vector<TorchStableAbiViolation> check_torch_stable_abi(const ElfInfo& elf, int target_major, int target_minor) {
  const std::string target = std::to_string(target_major) + "." + std::to_string(target_minor);
  std::vector<TorchStableAbiViolation> out;
  for (const auto& s : elf.dynamic) {
    if (!s.undefined) continue;
    bool listed = false;
    for (const auto& shim : kTorchShim) {
      if (s.name != shim.name) continue;
      listed = true;
      if (shim.major > target_major || (shim.major == target_major && shim.minor > target_minor))
        out.push_back({s.name, std::to_string(shim.major) + "." + std::to_string(shim.minor), target});
      break;
    }
    if (listed || !s.name.starts_with("_Z")) continue;
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(
        abi::__cxa_demangle(s.name.c_str(), nullptr, nullptr, &status), std::free);
    if (status != 0 || !demangled) continue;
    std::string_view d(demangled.get());
    bool internal = d.starts_with("c10::") || d.starts_with("at::") ||
                    (d.starts_with("torch::") && !d.starts_with("torch::stable::"));
    if (internal) out.push_back({std::string(d), std::nullopt, target});
  }
  return out;
}

std::vector<std::string> disallowed_libraries(const ElfInfo& elf) {
  static const std::set<std::string> kManylinux = {
      "libgcc_s.so.1", "libstdc++.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libc.so.6", "libnsl.so.1",
      "libutil.so.1", "libpthread.so.0", "libresolv.so.2", "libX11.so.6", "libXext.so.6", "libXrender.so.1",
      "libICE.so.6", "libSM.so.6", "libGL.so.1", "libgobject-2.0.so.0", "libgthread-2.0.so.0",
      "libglib-2.0.so.0", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libz.so.1", "libexpat.so.1"};
  std::vector<std::string> out;
  for (const auto& lib : elf.needed) {
    if (kManylinux.contains(lib)) continue;
    // The runtime a kernel is loaded into: Torch's own libraries and the CUDA/ROCm runtimes it ships.
    if (matches_prefix(lib, {"libtorch", "libc10", "libcudart.so", "libcuda.so", "libcublas", "libcublasLt",
                             "libcudnn", "libnvrtc", "libcusparse", "libcufft", "libcurand", "libnccl",
                             "libamdhip64.so", "libhiprtc", "libtvm_ffi"})) {
      if (!matches_prefix(lib, {"libtorch_python"})) continue;
    }
    out.push_back(lib);
  }
  return out;
}

std::vector<std::string> torch_library_namespaces(const ElfInfo& elf) {
  std::set<std::string> out;
  for (const auto& name : elf.local_names) {
    if (name.find("TORCH_LIBRARY_init_") == std::string::npos) continue;
    std::string ident = demangled_identifier(name);
    for (std::string_view prefix : {"STABLE_TORCH_LIBRARY_init_", "TORCH_LIBRARY_init_"}) {
      if (ident.starts_with(prefix) && ident.size() > prefix.size()) {
        out.insert(ident.substr(prefix.size()));
        break;
      }
    }
  }
  return {out.begin(), out.end()};
}

std::vector<std::string> python_module_names(const ElfInfo& elf) {
  std::vector<std::string> out;
  for (const auto& s : elf.dynamic) {
    if (!s.undefined && s.name.starts_with("PyInit_") && s.name.size() > 7) out.push_back(s.name.substr(7));
  }
  return out;
}

}  // namespace khub::publish
