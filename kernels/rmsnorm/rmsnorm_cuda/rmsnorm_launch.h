// CUDA launcher of RMSNorm (no torch): raw pointers, layouts and a stream in, a cudaError_t out.
#pragma once
#include <cuda_runtime_api.h>

#include "rmsnorm.h"

namespace khub_kernels::rmsnorm {

// Runs RMSNorm (and the fused residual add when a.residual is set) on `stream`. Uses 16-byte
// vector accesses when `vector_ok` (all row starts 16-byte aligned, n a multiple of 16 / element
// size), element accesses otherwise. Returns the launch error, cudaSuccess otherwise.
cudaError_t launch_rms_norm(const RmsNormArgs& a, bool vector_ok, cudaStream_t stream);

}  // namespace khub_kernels::rmsnorm
