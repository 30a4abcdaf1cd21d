// GEGLU / GELU device code: one thread per V output elements, block (row, column tile). No torch.
#pragma once
#include "geglu.h"
#include "khub_kernels/row_norm.cuh"

namespace khub_kernels::geglu {

// 1 + erf(x) = 2 - erfc(|x|) for x >= 0, erfc(|x|) for x < 0, with erfc from Abramowitz & Stegun
// 7.1.26 (|error| <= 1.5e-7): two MUFU ops and six FMAs, no branch (erff costs ~25 instructions
// and a divergent branch, which made GEGLU instruction-bound on the H200), and no cancellation
// in the negative tail.
__device__ __forceinline__ float one_plus_erf(float x) {
  const float ax = fabsf(x);
  const float t = __fdividef(1.f, fmaf(0.3275911f, ax, 1.f));
  float p = fmaf(1.061405429f, t, -1.453152027f);
  p = fmaf(p, t, 1.421413741f);
  p = fmaf(p, t, -0.284496736f);
  p = fmaf(p, t, 0.254829592f);
  const float erfc = p * t * __expf(-ax * ax);
  return x >= 0.f ? 2.f - erfc : erfc;
}

template <Act A>
__device__ __forceinline__ float gelu(float g) {
  if constexpr (A == Act::GeluErf) {
    return 0.5f * g * one_plus_erf(g * 0.70710678118654752f);
  } else {
    // 0.5 (1 + tanh(u)) == 1 / (1 + exp(-2u)): the same function without tanhf's cost and without
    // the cancellation of 1 + tanh(u) for negative u; the approximate division (one MUFU op
    // instead of the correctly rounded reciprocal's ~10 instructions) is within 2 ulp of fp32;
    // exp overflow gives g * 0. -2u / ln 2 = g (k1 + k3 g^2) with k1 = -2 sqrt(2/pi) / ln 2 and
    // k3 = 0.044715 k1 goes straight to ex2 (three FP ops and one MUFU where __expf(-2u) took six
    // and one): GEGLU tanh [2,1024,2*2048] in graphs 4.79 -> 4.56 us in a probe on the H200, where
    // the input sits in L2 and the kernel is issue-bound. Infinities and NaN as before.
    const float t = g * fmaf(-0.102943242f, g * g, -2.30220819f);
    float e;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(t));
    return __fdividef(g, 1.f + e);
  }
}

// Each thread handles U vectors of V outputs, U * blockDim.x vectors per block (tile), all loads
// issued before the math. TileX: grid (tiles, rows), so blocks scheduled together stream through
// consecutive memory, the faster order on the H200 (geglu.cu); otherwise (rows, tiles), for more
// than 65535 rows. Both read their coordinates straight from blockIdx: a 1D grid that divided the
// block number cost GEGLU 2-3 %. L1Keep: the 16-byte loads allocate in L1 (evict_last) instead of
// bypassing it, for inputs that come from L2 (a probe option: 0.1 us faster in graph replay,
// 0.5-0.8 us slower cold). Threads: the block size it is launched with (geglu.cu: 128, or 256 for
// rows of 256 vectors), a separate instantiation so that the 128-thread kernels keep their code.
template <typename T, int V, int U, Act A, bool Gated, bool TileX, bool L1Keep = false, int Threads = 128>
__global__ void __launch_bounds__(Threads) geglu_kernel(const T* __restrict__ x, RowLayout xl, T* __restrict__ out,
                                                        int64_t n) {
  cuda::wait_for_previous_grid();
  const int64_t row = TileX ? blockIdx.y : blockIdx.x;
  const int64_t tile = TileX ? blockIdx.x : blockIdx.y;
  const T* xr = x + cuda::row_offset(xl, row);
  float h[U][V], g[U][V];
  int64_t col[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    col[u] = ((tile * U + u) * blockDim.x + threadIdx.x) * V;
    if (col[u] < n) {
      if constexpr (V * sizeof(T) == 16) {
        cuda::Pack16<T> ph, pg;
        ph.u = cuda::ldg_row<L1Keep>(xr + col[u]);
        if constexpr (Gated) pg.u = cuda::ldg_row<L1Keep>(xr + n + col[u]);
        cuda::unpack16<T>(ph.u, h[u]);
        if constexpr (Gated) cuda::unpack16<T>(pg.u, g[u]);
      } else {
        cuda::load_vec<T, V>(xr + col[u], h[u]);
        if constexpr (Gated) cuda::load_vec<T, V>(xr + n + col[u], g[u]);
      }
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (col[u] >= n) continue;
#pragma unroll
    for (int i = 0; i < V; ++i) h[u][i] = Gated ? h[u][i] * gelu<A>(g[u][i]) : gelu<A>(h[u][i]);
    cuda::store_vec<T, V, true>(out + row * n + col[u], h[u]);
  }
}

}  // namespace khub_kernels::geglu
