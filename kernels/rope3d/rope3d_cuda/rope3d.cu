// Instantiates the RoPE kernels for fp32, fp16 and bf16, one kernel per trig mode.
#include "rope3d.cuh"
#include "rope3d_launch.h"

namespace khub_kernels::rope3d {
namespace {

template <typename T, bool Norm, TrigMode M>
cudaError_t run(const RopeArgs& a, bool vector_ok, cudaStream_t stream) {
  const int64_t rows = a.q_layout.rows * (a.k ? 2 : 1);
  const bool w_f32 = a.weight_dtype == DType::F32 && a.dtype != DType::F32;
  const RopeRowOp<T, Norm, M> op{static_cast<const T*>(a.q), a.q_layout, static_cast<const T*>(a.k), a.k_layout,
                                 static_cast<T*>(a.q_out), static_cast<T*>(a.k_out), Norm ? a.q_weight : nullptr,
                                 Norm ? a.k_weight : nullptr, w_f32, a.d, a.trig};
  return cuda::launch_row_norm(op, rows, a.d, a.eps, vector_ok, stream);
}

template <typename T>
cudaError_t run(const RopeArgs& a, bool vector_ok, cudaStream_t stream) {
  if (a.norm) {
    // The fused norm is only offered with table trig (rms_norm_rope_table_qk).
    if (a.trig.mode != TrigMode::Table) return cudaErrorInvalidValue;
    return run<T, true, TrigMode::Table>(a, vector_ok, stream);
  }
  switch (a.trig.mode) {
    case TrigMode::Api: return run<T, false, TrigMode::Api>(a, vector_ok, stream);
    case TrigMode::Table: return run<T, false, TrigMode::Table>(a, vector_ok, stream);
    case TrigMode::Coords: return run<T, false, TrigMode::Coords>(a, vector_ok, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_rope3d(const RopeArgs& a, bool vector_ok, cudaStream_t stream) {
  if (a.q_layout.rows == 0 || a.d == 0) return cudaSuccess;
  return cuda::dispatch_storage(a.dtype, [&](auto t) { return run<typename decltype(t)::type>(a, vector_ok, stream); });
}

}  // namespace khub_kernels::rope3d
