// Instantiates the AdaLN row op for fp32, fp16 and bf16.
#include "adaln.cuh"
#include "adaln_launch.h"

namespace khub_kernels::adaln {
namespace {

template <typename T>
cudaError_t run(const AdaLnArgs& a, bool vector_ok, cudaStream_t stream) {
  const AdaLnOp<T> op{static_cast<const T*>(a.x), a.x_layout, static_cast<const T*>(a.delta), a.delta_layout,
                      a.gate, a.scale, a.shift, static_cast<T*>(a.out), static_cast<T*>(a.h_out), a.n};
  return cuda::launch_row_norm(op, a.x_layout.rows, a.n, a.eps, vector_ok, stream);
}

}  // namespace

cudaError_t launch_adaln(const AdaLnArgs& a, bool vector_ok, cudaStream_t stream) {
  return cuda::dispatch_storage(a.dtype, [&](auto t) { return run<typename decltype(t)::type>(a, vector_ok, stream); });
}

}  // namespace khub_kernels::adaln
