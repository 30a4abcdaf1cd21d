#pragma once
// Name lists shaped like upstream's test_variants.py, built from a description of its lists rather
// than copied.
#include <string>
#include <vector>

namespace khub::variants {

inline std::vector<std::string> product(const std::vector<std::string>& a, const std::vector<std::string>& b,
                                        const char* sep = "-") {
  std::vector<std::string> out;
  for (const auto& x : a) {
    for (const auto& y : b) out.push_back(x.empty() ? y : y.empty() ? x : x + sep + y);
  }
  return out;
}

/// torch{25,29,210} × {tagless, cxx98, cxx11} × backends × {aarch64,x86_64}-linux; darwin; tvm-ffi01.
inline const std::vector<std::string>& variant_strings() {
  static const std::vector<std::string> names = [] {
    auto frameworks = product({"torch25", "torch29", "torch210"}, {"", "cxx98", "cxx11"});
    auto out = product(product(frameworks, {"cpu", "cu126", "cu128", "cu130", "rocm63", "rocm64", "xpu20252"}),
                       {"aarch64-linux", "x86_64-linux"});
    for (const auto& n : product({"torch25", "torch29", "torch210"}, {"cpu-aarch64-darwin", "metal-aarch64-darwin"}))
      out.push_back(n);
    for (const auto& n : product({"tvm-ffi01"}, {"cpu-x86_64-linux", "cu126-x86_64-linux", "cu128-x86_64-linux",
                                                 "cu130-x86_64-linux", "xpu20253-x86_64-linux",
                                                 "cu130-aarch64-linux", "metal-aarch64-darwin"}))
      out.push_back(n);
    return out;
  }();
  return names;
}

inline const std::vector<std::string>& stable_abi_variant_strings() {
  static const std::vector<std::string> names =
      product(product({"torch-stable-abi211", "torch-stable-abi29"}, {"cpu", "cu126", "cu128", "cu130", "rocm64"}),
              {"aarch64-linux", "x86_64-linux"});
  return names;
}

inline const std::vector<std::string>& noarch_variant_strings() {
  static const std::vector<std::string> names = {"torch-cpu",  "torch-cuda", "torch-metal", "torch-neuron",
                                                 "torch-rocm", "torch-tpu",  "torch-xpu",   "torch-npu",
                                                 "torch-universal"};
  return names;
}

/// Older Hub shapes: torch 2.4–2.13, CUDA 11.8–13.2, ROCm 6.1–7.2, XPU, CANN, Windows, neuron, tpu.
inline const std::vector<std::string>& superset_variant_strings() {
  static const std::vector<std::string> names = [] {
    auto frameworks = product({"torch24", "torch26", "torch27", "torch28", "torch211", "torch212", "torch213"},
                              {"", "cxx98", "cxx11"});
    auto out = product(product(frameworks, {"cu118", "cu121", "cu124", "cu129", "cu132", "rocm61", "rocm62",
                                            "rocm70", "rocm71", "rocm72", "xpu20253", "xpu20260", "cann83"}),
                       {"x86_64-linux"});
    for (const auto& n : product({"torch28", "torch29", "torch210"}, {"cu128-x86_64-windows", "cpu-x86_64-windows"}))
      out.push_back(n);
    for (const auto& n : product({"torch212"}, {"neuron-x86_64-linux", "tpu-x86_64-linux"})) out.push_back(n);
    return out;
  }();
  return names;
}

}  // namespace khub::variants
