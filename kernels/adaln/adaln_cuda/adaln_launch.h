// CUDA launcher of AdaLN (no torch).
#pragma once
#include <cuda_runtime_api.h>

#include "adaln.h"

namespace khub_kernels::adaln {

// 16-byte accesses when `vector_ok` (every row start of every input 16-byte aligned, n a multiple
// of 16 / element size). scale, shift and (with delta) gate must all have a table or all have none
// (cudaErrorInvalidValue otherwise). Returns the launch error, cudaSuccess otherwise.
cudaError_t launch_adaln(const AdaLnArgs& a, bool vector_ok, cudaStream_t stream);

}  // namespace khub_kernels::adaln
