#pragma once
// Host facts as the Python `kernels` client sees them inside a torch process: the LibTorch this
// program links decides the Torch version, the C++11 ABI flag and the GPU backend version.
#include "khub/variants/host.h"

namespace khub::variants {

/// detect_platform() plus: torch = LibTorch's major.minor; cxx11_abi = the _GLIBCXX_USE_CXX11_ABI
/// LibTorch was built with (Linux only, none elsewhere); backend = CUDA at the CUDA runtime version
/// LibTorch was built with when its CUDA library is loaded, else ROCm at the HIP version of a ROCm
/// build, else cpu (Metal, XPU, CANN, Neuron and TPU are Python-side detections: use with_backend()
/// or a host JSON); cuda_capability = device 0 through the driver API; rocm_arch (a ROCm torch)
/// from the amdgpu driver's topology. Never throws.
[[nodiscard]] HostInfo detect_host();

}  // namespace khub::variants
