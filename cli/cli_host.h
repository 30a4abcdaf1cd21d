#pragma once
// The host the CLI chooses variants for. The CLI links no torch; when khub was built with LibTorch
// it describes a machine running that LibTorch — the facts torch_bridge's detect_host() reads in a
// C++ application built here (torch major.minor, C++11 ABI, the CUDA or HIP version torch was built
// with; a CPU-only torch means backend cpu, as in the Python client). Without LibTorch it detects the
// machine as the Python client does without torch.
#include <string>
#include <vector>

#include "khub/variants/host.h"

namespace khub::cli {

inline variants::HostInfo cli_host(std::vector<std::string>* warnings = nullptr) {
  variants::HostInfo host = variants::detect_host_without_torch(warnings);
#if KHUB_HAVE_TORCH
  host.torch = variants::parse_dotted_version(KHUB_BUILT_TORCH_VERSION).value();
  if (host.os == "linux") host.cxx11_abi = KHUB_BUILT_TORCH_CXX11_ABI != 0;
  // As kernels' _backend(): torch.version.cuda, else torch.version.hip before its first '-'
  // ("6.4.43482-0f2d" → rocm64), else cpu.
  const std::string cuda = KHUB_BUILT_TORCH_CUDA, hip = KHUB_BUILT_TORCH_HIP;
  const auto hip_version = variants::parse_dotted_version(std::string_view(hip).substr(0, hip.find('-')));
  if (!cuda.empty()) {
    host.backend = variants::Backend{variants::BackendKind::Cuda, variants::parse_dotted_version(cuda).value()};
  } else if (hip_version) {
    host.backend = variants::Backend{variants::BackendKind::Rocm, *hip_version};
    host.rocm_arch = variants::rocm_device_arch();
  } else {
    host.backend = variants::Backend{};
  }
#endif
  return host;
}

}  // namespace khub::cli
