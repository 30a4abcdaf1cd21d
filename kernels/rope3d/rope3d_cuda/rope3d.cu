// Instantiates the RoPE kernels for fp32, fp16 and bf16, one kernel per trig mode.
#include "rope3d.cuh"
#include "rope3d_launch.h"

namespace khub_kernels::rope3d {
namespace {

template <typename T, bool Norm, TrigMode M, bool StreamOut = !Norm>
RopeRowOp<T, Norm, M, StreamOut> make_op(const RopeArgs& a) {
  const bool w_f32 = a.weight_dtype == DType::F32 && a.dtype != DType::F32;
  return {static_cast<const T*>(a.q), a.q_layout, static_cast<const T*>(a.k), a.k_layout,
          static_cast<T*>(a.q_out), static_cast<T*>(a.k_out), Norm ? a.q_weight : nullptr,
          Norm ? a.k_weight : nullptr, w_f32, a.d, a.trig};
}

template <typename T, bool Norm, TrigMode M>
cudaError_t run(const RopeArgs& a, bool vector_ok, cudaStream_t stream) {
  const int64_t rows = a.q_layout.rows * (a.k ? 2 : 1);
  return cuda::launch_row_norm(make_op<T, Norm, M>(a), rows, a.d, a.eps, vector_ok, stream);
}

// One group of 32-256 threads per token by row length, two chunks a thread. Lean where the row is
// exactly the group's chunks (one multiply-high division a token, no per-chunk bounds checks, the
// mean by a constant multiply): [2,2688,2048] q+k probe cold / graph 28.22-28.67 / 25.0-25.2 ->
// 27.58-27.78 / 24.5-24.7 us on the H200, outputs bit-identical.
template <bool TWeight, typename Op>
cudaError_t launch_token_groups(const Op& op, int64_t tokens, int n, float eps, cudaStream_t stream) {
  constexpr int vec = 16 / sizeof(typename Op::T);
  if (n <= 32 * 2 * vec) return launch_rope_token<32, 2, 8, TWeight, Op, false, true>(op, tokens, n, eps, stream);
  if (n <= 64 * 2 * vec) return launch_rope_token<64, 2, 16, TWeight, Op, false, true>(op, tokens, n, eps, stream);
  if (n <= 128 * 2 * vec) return launch_rope_token<128, 2, 8, TWeight, Op, false, true>(op, tokens, n, eps, stream);
  return launch_rope_token<256, 2, 4, TWeight, Op, false, true>(op, tokens, n, eps, stream);
}

// The fused norm with q and k, rows of up to 512 16-byte vectors: one group per token, two chunks a
// thread, 1024 threads per SM ([2,2688,2048] q+k: 34.2 -> 31.3 us against one group per row),
// cache-streaming stores (31.8 -> 31.2 us, and 33.0 -> 31.2 with every call's weights and tables
// cold as in kernels_bench), and a T-weight kernel
// without run-time weight branches. Returns false when the shape does not fit.
template <typename T>
bool run_token_groups(const RopeArgs& a, cudaStream_t stream, cudaError_t& err) {
  constexpr int vec = 16 / sizeof(T);
  const auto op = make_op<T, true, TrigMode::Table, true>(a);
  const int64_t tokens = a.q_layout.rows;
  const int n = static_cast<int>(a.d);
  if (a.d > 256 * 2 * vec) return false;
  const bool t_weight = a.q_weight && a.k_weight && a.weight_dtype == a.dtype;
  err = t_weight ? launch_token_groups<true>(op, tokens, n, a.eps, stream)
                 : launch_token_groups<false>(op, tokens, n, a.eps, stream);
  return true;
}

// The plain table rotation of q and k with one group per token, one chunk a thread, 2048 threads
// per SM: the token's trig gathered once for both rows ([2,2688,2048] q+k 27.9 -> 26.2 us,
// [2,8064,2048] 72.7 -> 68.0 against one group of 128 threads x 2 chunks per row).
// Rows of up to 256 16-byte vectors; returns false when the shape does not fit.
template <typename T>
bool run_plain_token(const RopeArgs& a, cudaStream_t stream, cudaError_t& err) {
  constexpr int vec = 16 / sizeof(T);
  const auto op = make_op<T, false, TrigMode::Table>(a);
  const int64_t tokens = a.q_layout.rows;
  const int n = static_cast<int>(a.d);
  if (n <= 32 * vec) err = launch_rope_token<32, 1, 16, false>(op, tokens, n, 0.f, stream);
  else if (n <= 64 * vec) err = launch_rope_token<64, 1, 16, false>(op, tokens, n, 0.f, stream);
  else if (n <= 128 * vec) err = launch_rope_token<128, 1, 16, false>(op, tokens, n, 0.f, stream);
  else if (n <= 256 * vec) err = launch_rope_token<256, 1, 8, false>(op, tokens, n, 0.f, stream);
  else return false;
  return true;
}

template <typename T>
cudaError_t run(const RopeArgs& a, bool vector_ok, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  if (a.norm) {
    // The fused norm is only offered with table trig (rms_norm_rope_table_qk).
    if (a.trig.mode != TrigMode::Table) return cudaErrorInvalidValue;
    if (vector_ok && a.k && run_token_groups<T>(a, stream, err)) return err;
    return run<T, true, TrigMode::Table>(a, vector_ok, stream);
  }
  switch (a.trig.mode) {
    case TrigMode::Api: return run<T, false, TrigMode::Api>(a, vector_ok, stream);
    case TrigMode::Table:
      if (vector_ok && a.k && run_plain_token<T>(a, stream, err)) return err;
      return run<T, false, TrigMode::Table>(a, vector_ok, stream);
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
