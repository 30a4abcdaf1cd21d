// Instantiates the RoPE kernels for fp32, fp16 and bf16.
#include "rope3d.cuh"
#include "rope3d_launch.h"

namespace khub_kernels::rope3d {
namespace {

template <typename T>
cudaError_t run(const RopeArgs& a, bool vector_ok, cudaStream_t stream) {
  const int64_t rows = a.q_layout.rows * (a.k ? 2 : 1);
  const bool w_f32 = a.weight_dtype == DType::F32 && a.dtype != DType::F32;
  if (!a.norm) {
    const RopeRowOp<T, false> op{static_cast<const T*>(a.q), a.q_layout, static_cast<const T*>(a.k), a.k_layout,
                                 static_cast<T*>(a.q_out), static_cast<T*>(a.k_out), nullptr, nullptr, false,
                                 a.d, a.trig};
    return cuda::launch_row_norm(op, rows, a.d, a.eps, vector_ok, stream);
  }
  const RopeRowOp<T, true> op{static_cast<const T*>(a.q), a.q_layout, static_cast<const T*>(a.k), a.k_layout,
                              static_cast<T*>(a.q_out), static_cast<T*>(a.k_out), a.q_weight, a.k_weight, w_f32,
                              a.d, a.trig};
  return cuda::launch_row_norm(op, rows, a.d, a.eps, vector_ok, stream);
}

}  // namespace

cudaError_t launch_rope3d(const RopeArgs& a, bool vector_ok, cudaStream_t stream) {
  if (a.q_layout.rows == 0 || a.d == 0) return cudaSuccess;
  return cuda::dispatch_storage(a.dtype, [&](auto t) { return run<typename decltype(t)::type>(a, vector_ok, stream); });
}

}  // namespace khub_kernels::rope3d
