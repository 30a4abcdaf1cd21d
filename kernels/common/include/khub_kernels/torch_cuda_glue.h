// CUDA side of the binding glue: device guard, current stream, launch-error check.
#pragma once
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "khub_kernels/torch_glue.h"

namespace khub_kernels::glue {

inline cudaStream_t current_stream(const at::Tensor& x) {
  return c10::cuda::getCurrentCUDAStream(x.device().index()).stream();
}

inline void check_launch(cudaError_t e, const char* op) {
  TORCH_CHECK(e == cudaSuccess, op, ": CUDA launch failed: ", cudaGetErrorString(e));
}

// Glue::Cuda, the CUDA side of the shared checks' policy.
struct CudaGlue {
  class DeviceGuard {
   public:
    explicit DeviceGuard(const at::Tensor& x) : guard_(x.device()) {}

   private:
    c10::cuda::CUDAGuard guard_;
  };
  static cudaStream_t current_stream(const at::Tensor& x) { return glue::current_stream(x); }
  static void check_launch(cudaError_t e, const char* op) { glue::check_launch(e, op); }
};

}  // namespace khub_kernels::glue
