// CUDA launcher of the RoPE ops (no torch).
#pragma once
#include <cuda_runtime_api.h>

#include "rope3d.h"

namespace khub_kernels::rope3d {

// Rotates q (and k) with optional fused RMSNorm (table trig only: cudaErrorInvalidValue otherwise). 16-byte accesses when `vector_ok` (every row start
// of q, k and the Api tables 16-byte aligned, D a multiple of 16 / element size); pairs of element
// accesses otherwise. Returns the launch error, cudaSuccess otherwise.
cudaError_t launch_rope3d(const RopeArgs& a, bool vector_ok, cudaStream_t stream);

}  // namespace khub_kernels::rope3d
