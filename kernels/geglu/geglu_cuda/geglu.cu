#include <algorithm>

#include "geglu.cuh"
#include "geglu_launch.h"

namespace khub_kernels::geglu {
namespace {

// Output vectors a thread: GEGLU loads two operands per output vector and takes one (two ran 5 %
// slower); the plain GELU in 16-bit takes two, so each thread still has two loads in flight
// (kernels_bench GELU-tanh bf16 46.2 us with two, 50.0 with one); in fp32 one (probe 86.2 vs 87.5,
// twice). All on the H200.
template <typename T, bool Gated>
constexpr int kUnroll = Gated || sizeof(T) == 4 ? 1 : 2;

// Tiles in grid x, rows in y (blocks scheduled together stream through consecutive memory): fp32
// GEGLU [2,2688,16384] 129.6 -> 124.1 us, GELU-tanh 91.8 -> 86.3 / 47.6 -> 46.6 (fp32 / bf16), the
// 16-bit GEGLU 0.5-1 % faster. Grid y holds at most 65535 rows; past that, rows go in x.
// A GEGLU row of exactly 256 vectors (16-bit n = 2048, fp32 n = 1024) is one block of 256 threads
// instead of two of 128: half the blocks, each with the same per-block cost (PDL wait, row offset),
// which counts once the input sits in L2 and the kernel is issue-bound. GEGLU tanh [2,1024,2*2048]
// in graphs 5.12 -> 4.79 us in a probe on the H200 (FlashInfer 4.49); with the ex2 form of GELU-tanh
// (geglu.cuh) bench/peers took it 5.47 -> 5.09 us (FlashInfer 4.47), while the erf GEGLU of that
// shape stayed at 6.62. Other widths keep 128 threads: no measurement says 256 helps where a row
// spans several blocks either way.
template <typename T, int V, Act A, bool Gated>
cudaError_t launch_vec(const GegluArgs& a, cudaStream_t stream) {
  constexpr int U = kUnroll<T, Gated>;
  const int64_t nvec = (a.n + V - 1) / V, rows = a.x_layout.rows;
  const auto x = static_cast<const T*>(a.x);
  const auto out = static_cast<T*>(a.out);
  if constexpr (Gated) {
    if (nvec == 256 && rows <= 65535)
      return cuda::launch(geglu_kernel<T, V, U, A, Gated, true, false, 256>, dim3(1, unsigned(rows)), dim3(256),
                          stream, x, a.x_layout, out, a.n);
  }
  const int threads = static_cast<int>(std::min<int64_t>(128, (nvec + U * 32 - 1) / (U * 32) * 32));
  const int64_t tiles = (nvec + threads * U - 1) / (threads * U);
  if (rows <= 65535 && tiles <= 0x7fffffffLL)
    return cuda::launch(geglu_kernel<T, V, U, A, Gated, true>, dim3(unsigned(tiles), unsigned(rows)),
                        dim3(threads), stream, x, a.x_layout, out, a.n);
  if (tiles > 65535 || rows > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  return cuda::launch(geglu_kernel<T, V, U, A, Gated, false>, dim3(unsigned(rows), unsigned(tiles)),
                      dim3(threads), stream, x, a.x_layout, out, a.n);
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
