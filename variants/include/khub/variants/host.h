#pragma once
// The facts about a host that decide which variants it accepts (docs/variants.md, Host facts). Code that
// has no torch builds a HostInfo itself or calls detect_host_without_torch(); torch_bridge's
// detect_host() fills it from LibTorch.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/variants/variant.h"

namespace khub::variants {

struct HostInfo {
  std::string os = "linux";   // linux | darwin | windows
  std::string cpu = "x86_64"; // x86_64 | aarch64 | …
  std::optional<Version> torch;        // major.minor of the torch in the process, none without torch
  std::optional<bool> cxx11_abi;       // Linux only
  Backend backend;                     // detected (or overridden) compute backend
  std::optional<Version> tvm_ffi;
  std::optional<Version> macos;        // darwin only
  std::optional<Version> cuda_capability;  // compute capability of device 0, when a GPU is present
  std::optional<std::string> rocm_arch;    // ROCm device 0's gcnArchName without features (gfx942)
  friend bool operator==(const HostInfo&, const HostInfo&) = default;
};

/// Host facts without torch: OS and CPU from uname (mapped like Python's platform module), CUDA
/// runtime version from libcudart loaded with dlopen (none → cpu), device capability through the
/// CUDA driver API loaded with dlopen. Never links CUDA.
[[nodiscard]] HostInfo detect_host_without_torch();
/// Same; a libcudart whose cudaRuntimeGetVersion fails adds upstream's warning to `warnings`.
[[nodiscard]] HostInfo detect_host_without_torch(std::vector<std::string>* warnings);

/// The parts of detection, for callers that know some facts already (torch_bridge):
/// OS, CPU and macOS version only (backend cpu);
[[nodiscard]] HostInfo detect_platform();
/// `cudaRuntimeGetVersion` from the first libcudart that loads (none without one);
[[nodiscard]] std::optional<Version> cuda_runtime_version(std::vector<std::string>* warnings = nullptr);
/// compute capability of CUDA device 0 through libcuda's driver API (none without a driver or GPU).
[[nodiscard]] std::optional<Version> cuda_device_capability();
/// the gfx name of the first GPU node of the amdgpu driver's KFD topology (`gfx_target_version`
/// 90402 → gfx942, 90010 → gfx90a, as rocminfo prints it): the arch kernels compares with a ROCm
/// build's archs (torch's gcnArchName without its `:feature` flags). None without an AMD GPU.
[[nodiscard]] std::optional<std::string> rocm_device_arch(
    const std::filesystem::path& kfd_nodes = "/sys/class/kfd/kfd/topology/nodes");

/// Applies an explicit backend override (`cpu` or the detected backend's name), with upstream's
/// error `Invalid backend '<b>', system supported backends: cpu, cuda`.
[[nodiscard]] Expected<HostInfo> with_backend(HostInfo host, std::string_view backend);

/// Parses the host JSON used by `khub variants --host FILE.json` (keys os, cpu, torch, cxx11_abi,
/// backend, backend_version, tvm_ffi, macos); and renders it back.
[[nodiscard]] Expected<HostInfo> host_from_json(std::string_view json_text);
/// `indent` as nlohmann::json::dump: -1 renders it on one line.
[[nodiscard]] std::string host_to_json(const HostInfo& host, int indent = 2);

}  // namespace khub::variants
