#include <algorithm>

#include "geglu.cuh"
#include "geglu_launch.h"

namespace khub_kernels::geglu {
namespace {

// Two 16-byte loads in flight per thread: GEGLU loads two operands per output vector (U = 1), the
// plain GELU one, so it takes two output vectors a thread (U = 2). H200 probe (docs/gpu-measurements.md,
// version 15): GELU-tanh [2,2688,8192] 52.6 -> 46.0 us with U = 2, at the copy floor; GEGLU ran
// slower with U = 2 (70.1 -> 72.8).
template <bool Gated>
constexpr int kUnroll = Gated ? 1 : 2;

// Block order: tile-fastest took fp32 GEGLU [2,2688,16384] from 130.2 to 124.2 us; for 16-bit
// GEGLU row-fastest stayed ahead (68.7 vs 69.0, [2,1024,4096] 10.6 vs 11.0).
template <typename T, bool Gated>
constexpr bool kTileFastest = !(Gated && sizeof(T) == 2);

template <typename T, int V, Act A, bool Gated>
cudaError_t launch_vec(const GegluArgs& a, cudaStream_t stream) {
  constexpr int U = kUnroll<Gated>;
  const int64_t nvec = (a.n + V - 1) / V;
  const int threads = static_cast<int>(std::min<int64_t>(128, (nvec + U * 32 - 1) / (U * 32) * 32));
  const int64_t tiles = (nvec + threads * U - 1) / (threads * U);
  if (a.x_layout.rows * tiles > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  const dim3 grid(static_cast<unsigned>(a.x_layout.rows * tiles));
  return cuda::launch(geglu_kernel<T, V, U, A, Gated, kTileFastest<T, Gated>>, grid, dim3(threads), stream,
                      static_cast<const T*>(a.x), a.x_layout, static_cast<T*>(a.out), a.n,
                      static_cast<unsigned>(tiles));
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
