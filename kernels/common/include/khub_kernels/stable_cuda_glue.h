// CUDA side of the stable-ABI binding glue: current stream and launch-error check. The device is set
// with torch::stable::accelerator::DeviceGuard.
#pragma once
#include <cuda_runtime_api.h>
#include <torch/csrc/stable/accelerator.h>

#include "khub_kernels/stable_glue.h"

// In libtorch_cuda.so; the C shim header declares it only under USE_CUDA, which an extension does
// not define.
extern "C" AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);

namespace khub_kernels::stable_glue {

inline cudaStream_t current_stream(const Tensor& x) {
  void* stream = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(x.get_device_index(), &stream));
  return static_cast<cudaStream_t>(stream);
}

inline void check_launch(cudaError_t e, const char* op) {
  STD_TORCH_CHECK(e == cudaSuccess, op, ": CUDA launch failed: ", cudaGetErrorString(e));
}

// Glue::Cuda, the CUDA side of the shared checks' policy.
struct CudaGlue {
  class DeviceGuard {
   public:
    explicit DeviceGuard(const Tensor& x) : guard_(x.get_device_index()) {}

   private:
    torch::stable::accelerator::DeviceGuard guard_;
  };
  static cudaStream_t current_stream(const Tensor& x) { return stable_glue::current_stream(x); }
  static void check_launch(cudaError_t e, const char* op) { stable_glue::check_launch(e, op); }
};

}  // namespace khub_kernels::stable_glue
