// CUDA launcher of GEGLU / GELU (no torch).
#pragma once
#include <cuda_runtime_api.h>

#include "geglu.h"

namespace khub_kernels::geglu {

// 16-byte accesses when `vector_ok` (x rows 16-byte aligned, n a multiple of 16 / element size).
// Returns the launch error, cudaSuccess otherwise.
cudaError_t launch_geglu(const GegluArgs& a, bool vector_ok, cudaStream_t stream);

}  // namespace khub_kernels::geglu
