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
  return cuda::dispatch_storage(a.dtype, [&](auto t) { return run<typename decltype(t)::type>(a, vector_ok, stream); });
}

}  // namespace khub_kernels::rmsnorm
