// Instantiates the RMSNorm row op for fp32, fp16 and bf16.
#include "rmsnorm.cuh"
#include "rmsnorm_launch.h"

namespace khub_kernels::rmsnorm {
namespace {

template <typename T>
cudaError_t run(const RmsNormArgs& a, bool vector_ok, cudaStream_t stream) {
  const RmsNormOp<T> op{static_cast<const T*>(a.x), a.x_layout, static_cast<const T*>(a.residual),
                        a.residual_layout, a.weight, a.weight_dtype == DType::F32 && a.dtype != DType::F32,
                        static_cast<T*>(a.out), static_cast<T*>(a.residual_out), a.n, a.rounding};
  return cuda::launch_row_norm(op, a.x_layout.rows, a.n, a.eps, vector_ok, stream);
}

}  // namespace

cudaError_t launch_rms_norm(const RmsNormArgs& a, bool vector_ok, cudaStream_t stream) {
  switch (a.dtype) {
    case DType::F32: return run<float>(a, vector_ok, stream);
    case DType::F16: return run<__half>(a, vector_ok, stream);
    case DType::BF16: return run<__nv_bfloat16>(a, vector_ok, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace khub_kernels::rmsnorm
