#pragma once
// Generators for property and interop tests: canonical variant names, near-miss names and hosts
// whose facts overlap the names often enough that all acceptance rules fire.
#include <random>
#include <string>
#include <vector>

#include "khub/variants/host.h"

namespace khub::variants {

template <typename T>
const T& pick(std::mt19937& rng, const std::vector<T>& items) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng)];
}
inline int below(std::mt19937& rng, int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

inline std::string random_backend_token(std::mt19937& rng) {
  switch (below(rng, 8)) {
    case 0: return "cpu";
    case 1: return "metal";
    case 2: return pick<std::string>(rng, {"neuron", "tpu"});
    case 3: return "cu" + std::to_string(pick<int>(rng, {11, 12, 13})) + std::to_string(below(rng, 10));
    case 4: return "cu12" + std::to_string(pick<int>(rng, {6, 8, 9}));
    case 5: return "rocm" + std::to_string(pick<int>(rng, {6, 7})) + std::to_string(below(rng, 5));
    case 6: return "xpu" + std::to_string(pick<int>(rng, {2025, 2026})) + std::to_string(below(rng, 4));
    default: return "cann8" + std::to_string(below(rng, 5));
  }
}

/// A canonical name: parses, and renders back to itself.
inline std::string random_variant_name(std::mt19937& rng) {
  const std::string tail = "-" + random_backend_token(rng) + "-" + pick<std::string>(rng, {"x86_64", "aarch64"}) +
                           "-" + pick<std::string>(rng, {"linux", "linux", "darwin", "windows"});
  const std::string torch_minor = std::to_string(pick<int>(rng, {9, 10, 11, 12, 13}));
  switch (below(rng, 6)) {
    case 0: return "torch2" + torch_minor + tail;
    case 1: return "torch2" + torch_minor + pick<std::string>(rng, {"-cxx11", "-cxx98"}) + tail;
    case 2: return "torch2" + torch_minor + "-cxx11" + tail;
    case 3: return "torch-stable-abi2" + torch_minor + tail;
    case 4: return "tvm-ffi0" + std::to_string(1 + below(rng, 2)) + tail;
    default:
      return "torch-" + pick<std::string>(rng, {"cpu", "cuda", "rocm", "xpu", "metal", "npu", "neuron", "tpu",
                                                "universal"});
  }
}

/// One random edit (drop, duplicate or replace a character, or change a dash) of a name.
inline std::string mangle(std::string name, std::mt19937& rng) {
  static const std::string alphabet = "-_0123456789abcdxtuvrmpCTX'\\ ";
  const size_t at = static_cast<size_t>(below(rng, static_cast<int>(name.size())));
  switch (below(rng, 4)) {
    case 0: name.erase(at, 1); break;
    case 1: name.insert(at, 1, name[at]); break;
    case 2: name[at] = alphabet[static_cast<size_t>(below(rng, static_cast<int>(alphabet.size())))]; break;
    default: name.insert(at, "-"); break;
  }
  return name;
}

inline HostInfo random_host(std::mt19937& rng) {
  HostInfo h;
  h.os = pick<std::string>(rng, {"linux", "linux", "darwin", "windows"});
  h.cpu = pick<std::string>(rng, {"x86_64", "aarch64"});
  if (below(rng, 5) != 0) h.torch = Version{2, pick<int>(rng, {9, 10, 11, 12, 13})};
  if (h.torch && h.os == "linux") h.cxx11_abi = below(rng, 4) != 0;
  if (below(rng, 3) == 0) h.tvm_ffi = Version{0, 1 + below(rng, 2)};
  if (h.os == "darwin" && below(rng, 4) != 0) h.macos = Version{pick<int>(rng, {15, 26}), below(rng, 3)};
  switch (below(rng, 8)) {
    case 0: h.backend = Backend{BackendKind::Cpu, {}}; break;
    case 1: h.backend = Backend{BackendKind::Metal, {}}; break;
    case 2: h.backend = Backend{pick<BackendKind>(rng, {BackendKind::Neuron, BackendKind::Tpu}), {}}; break;
    case 3:
    case 4: h.backend = Backend{BackendKind::Cuda, Version{pick<int>(rng, {11, 12, 13}), below(rng, 10)}}; break;
    case 5: h.backend = Backend{BackendKind::Rocm, Version{pick<int>(rng, {6, 7}), below(rng, 5)}}; break;
    case 6: h.backend = Backend{BackendKind::Xpu, Version{pick<int>(rng, {2025, 2026}), below(rng, 4)}}; break;
    default: h.backend = Backend{BackendKind::Cann, Version{8, below(rng, 5)}}; break;
  }
  return h;
}

/// 1–40 names, about half of them built for the host's OS, CPU and backend so that many pass.
inline std::vector<std::string> random_candidate_set(std::mt19937& rng, const HostInfo& host) {
  std::vector<std::string> names;
  const int n = 1 + below(rng, 40);
  for (int i = 0; i < n; ++i) {
    std::string name = random_variant_name(rng);
    const bool noarch = name.rfind("torch-", 0) == 0 && name.rfind("torch-stable-abi", 0) != 0;
    if (below(rng, 2) == 0 && !noarch) {
      // Re-target the arch tail to the host: <framework>-<host backend>-<host cpu>-<host os>.
      const size_t cut = name.rfind('-', name.rfind('-', name.rfind('-') - 1) - 1);
      name = name.substr(0, cut) + "-" + host.backend.token() + "-" + host.cpu + "-" + host.os;
    }
    names.push_back(name);
  }
  return names;
}

}  // namespace khub::variants
