#include "khub/variants/torch_host.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/util/Exception.h>
#include <torch/headeronly/version.h>

namespace khub::variants {
namespace {

// The CUDA runtime LibTorch was built with (torch.version.cuda), or none for a CPU-only LibTorch
// or when libtorch_cuda is not loaded.
std::optional<Version> torch_cuda_version() {
  try {
    const long v = at::detail::getCUDAHooks().versionCUDART();
    if (v <= 0) return std::nullopt;
    return Version{static_cast<int>(v / 1000), static_cast<int>((v % 1000) / 10)};
  } catch (const c10::Error&) {
    return std::nullopt;
  }
}

// "6.4.43482-0f2d" → "6.4.43482": upstream reads the part before the first '-'.
std::string_view hip_release(std::string_view hip) { return hip.substr(0, hip.find('-')); }

}  // namespace

HostInfo detect_host() {
  HostInfo host = detect_platform();
  host.torch = Version{TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR};
#if defined(__linux__) && defined(_GLIBCXX_USE_CXX11_ABI)
  host.cxx11_abi = _GLIBCXX_USE_CXX11_ABI != 0;
#endif
  if (auto cuda = torch_cuda_version()) {
    host.backend = Backend{BackendKind::Cuda, cuda};
  } else if (auto hip = parse_dotted_version(hip_release(KHUB_TORCH_HIP_VERSION))) {
    host.backend = Backend{BackendKind::Rocm, hip};
    host.rocm_arch = rocm_device_arch();
  }
  host.cuda_capability = cuda_device_capability();
  return host;
}

}  // namespace khub::variants
