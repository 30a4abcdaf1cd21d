#pragma once
// The torch test kernels (modules/torch_kernel.cpp, built as modules "a" and "b" under
// KHUB_TORCH_KERNEL_DIR) laid out as kernel-builder build/<variant>/ files for this host. Shared by
// the loader tests and bench/kernel_bench.
#include <filesystem>
#include <map>
#include <string>

#include "fixture_hub.h"
#include "khub/base/hash.h"
#include "khub/kernel.h"
#include "khub/variants/variant.h"
#include "test_util.h"

namespace khub::test {

/// This host's variant name for the torch khub runs with, e.g. torch212-cxx11-cpu-x86_64-linux.
inline std::string host_variant() {
  const auto& h = current_host();
  return "torch" + std::to_string(h.torch->major) + std::to_string(h.torch->minor) + "-cxx11-" + h.backend.token() +
         "-" + h.cpu + "-" + h.os;
}

/// The backend a variant name stands for, as metadata.json names it (`khub check` compares them).
inline std::string backend_type_of(const std::string& variant) {
  auto v = variants::parse_variant(variant);
  if (!v) return "cpu";
  return v->is_arch() ? std::string(v->arch->backend.name()) : v->noarch->backend_name;
}

/// build/<variant>/ of test module `module` (whose id is `id`): the module, __init__.py and a
/// metadata.json whose digest is computed here by hand (independently of khub::protocol).
inline std::map<std::string, FixtureFile> test_kernel_files(const std::string& id, const std::string& module,
                                                            const std::string& variant = host_variant()) {
  std::map<std::string, std::string> files = {
      {id + ".abi3.so", slurp(std::filesystem::path(KHUB_TORCH_KERNEL_DIR) / module / (id + ".abi3.so"))},
      {"__init__.py", "from ._ops import ops\n"}};
  std::string digest;
  for (const auto& [p, c] : files) {
    Hasher h(HashAlgorithm::Sha256);
    h.update(c);
    digest += std::string(digest.empty() ? "" : ",") + "\"" + p + "\":\"" + base64_encode(h.finish()) + "\"";
  }
  std::map<std::string, FixtureFile> out;
  for (auto& [p, c] : files) out["build/" + variant + "/" + p] = {c, p.ends_with(".so")};
  out["build/" + variant + "/metadata.json"] = {
      "{\"name\":\"test-rmsnorm\",\"id\":\"" + id +
          "\",\"version\":1,\"license\":\"Apache-2.0\",\"python-depends\":[],\"backend\":{\"type\":\"" + backend_type_of(variant) + "\"},"
          "\"digest\":{\"algorithm\":\"sha256\",\"files\":{" + digest + "}}}",
      false};
  return out;
}

}  // namespace khub::test
