// Launches of an empty kernel three ways, for kernels_bench --host-breakdown: what the launch path
// khub's kernels take (cudaLaunchKernelEx with the programmatic-serialization attribute) costs on
// the host against a plain launch.
#pragma once
#include <cuda_runtime.h>

namespace khub_bench {

enum class EmptyLaunch { Chevron, LaunchEx, LaunchExPdl };

// One block of 128 threads on `stream`. LaunchExPdl goes through khub_kernels::cuda::launch, so
// KHUB_KERNELS_PDL=0 drops the attribute there too.
cudaError_t launch_empty(EmptyLaunch how, cudaStream_t stream);

}  // namespace khub_bench
