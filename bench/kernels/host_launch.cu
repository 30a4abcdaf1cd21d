#include "host_launch.h"

#include "khub_kernels/launch.cuh"

namespace khub_bench {
namespace {

// No memory access, so it need not wait for the previous grid even when launched with PDL.
__global__ void empty_kernel(int) {}

}  // namespace

cudaError_t launch_empty(EmptyLaunch how, cudaStream_t stream) {
  switch (how) {
    case EmptyLaunch::Chevron:
      empty_kernel<<<1, 128, 0, stream>>>(0);
      return cudaGetLastError();
    case EmptyLaunch::LaunchEx: {
      cudaLaunchConfig_t cfg{};
      cfg.gridDim = dim3(1);
      cfg.blockDim = dim3(128);
      cfg.stream = stream;
      return cudaLaunchKernelEx(&cfg, empty_kernel, 0);
    }
    case EmptyLaunch::LaunchExPdl: return khub_kernels::cuda::launch(empty_kernel, dim3(1), dim3(128), stream, 0);
  }
  return cudaErrorInvalidValue;
}

}  // namespace khub_bench
