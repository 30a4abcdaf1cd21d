// CUDA side of the tvm-ffi binding glue: the caller's stream (TVMFFIEnvGetStream: what the host set with
// TVMFFIEnvSetStream for this thread and device; null, the legacy default stream, when it set none), the
// device guard and the launch-error check.
#pragma once
#include <cuda_runtime_api.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/device_guard.h>

#include "khub_kernels/tvm_ffi_glue.h"

namespace khub_kernels::ffi_glue {

using DeviceGuard = tvm::ffi::CUDADeviceGuard;

inline cudaStream_t current_stream(const Tensor& x) {
  return static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, x.device_index()));
}

inline void check_launch(cudaError_t e, const char* op) {
  KHUB_FFI_CHECK(e == cudaSuccess, RuntimeError, op, ": CUDA launch failed: ", cudaGetErrorString(e));
}

// Glue<B>::Cuda, the CUDA side of the shared checks' policy.
struct CudaGlue {
  class DeviceGuard {
   public:
    explicit DeviceGuard(const Tensor& x) : guard_(x.device_index()) {}

   private:
    tvm::ffi::CUDADeviceGuard guard_;
  };
  static cudaStream_t current_stream(const Tensor& x) { return ffi_glue::current_stream(x); }
  static void check_launch(cudaError_t e, const char* op) { ffi_glue::check_launch(e, op); }
};

}  // namespace khub_kernels::ffi_glue
