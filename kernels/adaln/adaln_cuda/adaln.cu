// Instantiates the AdaLN row op for fp32, fp16 and bf16, with and without the gated residual and
// the modulation table.
#include "adaln_launch.h"
#include "adaln_rows.cuh"

namespace khub_kernels::adaln {
namespace {

// adaln_rows_kernel (R rows of a sample a group, one modulation fetch for them) where it was
// measured faster than the row engine on the H200: no gated
// residual, a modulation per sample (or shared), an even number of rows a sample, 16-bit rows of
// 2048, 3072 or 4096 and fp32 rows of 2048. [2,2688,2048] bf16 15.2 / 12.5 -> 13.9 / 11.5 us,
// and 13.7-14.3 / 10.1 with the rows read into L1 (L1Keep: 16-bit rows of 2048 below 8192 rows),
// [2,8064,2048] 37.8 -> 35.9 (four rows a group), fp32 [2,2688,2048] 27.2 -> 25.6, [2,1024,2048]
// 9.4 -> 8.3, [1,4096,4096] 22.4 -> 20.7. The groups keep the engine's thread layout, so the
// outputs are the engine's bit for bit. Returns false where it does not apply.
template <typename T, bool Table>
bool run_rows(const AdaLnArgs& a, bool vector_ok, cudaStream_t stream, cudaError_t& err) {
  const int64_t s = a.x_layout.inner;
  if (!vector_ok || a.delta || a.scale.stride_s != 0 || a.shift.stride_s != 0 || s % 2 != 0) return false;
  if constexpr (sizeof(T) == 2) {
    switch (a.n) {
      case 2048:
        err = a.x_layout.rows >= 8192 && s % 4 == 0 ? launch_rows<T, Table, 128, 2, 4, 4>(a, stream)
                                                     : launch_rows<T, Table, 128, 2, 2, 8, true>(a, stream);
        return true;
      case 3072: err = launch_rows<T, Table, 128, 3, 2, 6>(a, stream); return true;
      case 4096: err = launch_rows<T, Table, 256, 2, 2, 3>(a, stream); return true;
      default: return false;
    }
  } else {
    if (a.n != 2048) return false;
    err = launch_rows<T, Table, 128, 4, 2, 4>(a, stream);
    return true;
  }
}

template <typename T, bool Gated, bool Table>
cudaError_t run(const AdaLnArgs& a, bool vector_ok, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  if constexpr (!Gated)
    if (run_rows<T, Table>(a, vector_ok, stream, err)) return err;
  const AdaLnOp<T, Gated, Table> op{static_cast<const T*>(a.x), a.x_layout, static_cast<const T*>(a.delta),
                                    a.delta_layout, a.gate, a.scale, a.shift, static_cast<T*>(a.out),
                                    static_cast<T*>(a.h_out), a.n};
  return cuda::launch_row_norm(op, a.x_layout.rows, a.n, a.eps, vector_ok, stream);
}

template <typename T>
cudaError_t run(const AdaLnArgs& a, bool vector_ok, cudaStream_t stream) {
  const bool gated = a.delta != nullptr, table = a.scale.table != nullptr;
  if ((a.shift.table != nullptr) != table || (gated && (a.gate.table != nullptr) != table))
    return cudaErrorInvalidValue;
  if (gated) return table ? run<T, true, true>(a, vector_ok, stream) : run<T, true, false>(a, vector_ok, stream);
  return table ? run<T, false, true>(a, vector_ok, stream) : run<T, false, false>(a, vector_ok, stream);
}

}  // namespace

cudaError_t launch_adaln(const AdaLnArgs& a, bool vector_ok, cudaStream_t stream) {
  return cuda::dispatch_storage(a.dtype, [&](auto t) { return run<typename decltype(t)::type>(a, vector_ok, stream); });
}

}  // namespace khub_kernels::adaln
