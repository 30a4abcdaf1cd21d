#include <algorithm>

#include "geglu.cuh"
#include "geglu_launch.h"

namespace khub_kernels::geglu {
namespace {

constexpr int kUnroll = 1;  // 2 measured slower on the H200 (docs/gpu-measurements.md)

template <typename T, int V, Act A, bool Gated>
cudaError_t launch_vec(const GegluArgs& a, cudaStream_t stream) {
  const int64_t nvec = (a.n + V - 1) / V;
  const int threads = static_cast<int>(std::min<int64_t>(128, (nvec + kUnroll * 32 - 1) / (kUnroll * 32) * 32));
  const int64_t tiles = (nvec + threads * kUnroll - 1) / (threads * kUnroll);
  if (a.x_layout.rows > 0x7fffffffLL || tiles > 65535) return cudaErrorInvalidConfiguration;
  const dim3 grid(static_cast<unsigned>(a.x_layout.rows), static_cast<unsigned>(tiles));
  return cuda::launch(geglu_kernel<T, V, kUnroll, A, Gated>, grid, dim3(threads), stream,
                      static_cast<const T*>(a.x), a.x_layout, static_cast<T*>(a.out), a.n);
}

template <typename T, Act A, bool Gated>
cudaError_t pick_vec(const GegluArgs& a, bool vector_ok, cudaStream_t stream) {
  if (vector_ok) return launch_vec<T, 16 / sizeof(T), A, Gated>(a, stream);
  return launch_vec<T, 1, A, Gated>(a, stream);
}

template <typename T>
cudaError_t run(const GegluArgs& a, bool vector_ok, cudaStream_t stream) {
  if (a.gated) {
    return a.act == Act::GeluErf ? pick_vec<T, Act::GeluErf, true>(a, vector_ok, stream)
                                 : pick_vec<T, Act::GeluTanh, true>(a, vector_ok, stream);
  }
  return a.act == Act::GeluErf ? pick_vec<T, Act::GeluErf, false>(a, vector_ok, stream)
                               : pick_vec<T, Act::GeluTanh, false>(a, vector_ok, stream);
}

}  // namespace

cudaError_t launch_geglu(const GegluArgs& a, bool vector_ok, cudaStream_t stream) {
  if (a.x_layout.rows == 0 || a.n == 0) return cudaSuccess;
  return cuda::dispatch_storage(a.dtype, [&](auto t) { return run<typename decltype(t)::type>(a, vector_ok, stream); });
}

}  // namespace khub_kernels::geglu
