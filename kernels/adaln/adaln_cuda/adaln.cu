// Instantiates the AdaLN row op for fp32, fp16 and bf16, with and without the gated residual and
// the modulation table.
#include "adaln.cuh"
#include "adaln_launch.h"

namespace khub_kernels::adaln {
namespace {

template <typename T, bool Gated, bool Table>
cudaError_t run(const AdaLnArgs& a, bool vector_ok, cudaStream_t stream) {
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
