// AdaLN without the gated residual, R rows of one sample a thread group: the rows share their
// modulation, so scale and shift (table + base) are fetched once a chunk for all R rows instead
// of once a row, which is what kept the row engine's AdaLN 1.1-1.6 us behind RMSNorm at the same
// shape on the H200. No torch.
#pragma once
#include "adaln.cuh"

namespace khub_kernels::adaln {

// Rows of exactly G x CH 16-byte chunks; R consecutive rows a G-thread group, all within one
// sample (the launcher checks inner % R == 0) and with a modulation that does not vary along s.
// Every row's x and the group's modulation are loaded before the reduction, so the modulation's
// L2 round trip overlaps the row's DRAM one: fetching it chunk by chunk at the stores, as the
// engine does, was 0.4-1.4 us slower. L1Keep: x and the modulation are read into L1
// with evict_last priority instead of x bypassing L1 (graph replay of [2,2688,2048] 11.5 -> 10.1 us,
// cold within noise; larger rows lost 0.4-0.9 us cold).
template <typename T, bool Table, int G, int CH, int R, int MinBlocks, bool L1Keep>
__global__ void __launch_bounds__(cuda::row_threads<G>(), MinBlocks)
    adaln_rows_kernel(const T* __restrict__ x, RowLayout xl, ModSource scale, ModSource shift, T* __restrict__ out,
                      int64_t rows, float eps) {
  constexpr int V = 16 / sizeof(T), N = G * CH * V;
  constexpr int RPB = cuda::row_threads<G>() / G;
  cuda::wait_for_previous_grid();
  __shared__ float scratch[G > 32 ? R * (G / 32) : 1];
  const int lane = threadIdx.x % G;
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * RPB + threadIdx.x / G) * R;
  const bool active = row0 < rows;
  const int64_t b = active ? cuda::div_nonneg(row0, xl.inner) : 0;
  const ModRow<T, Table> sc = mod_row<T, Table>(scale, b, 0), sh = mod_row<T, Table>(shift, b, 0);
  cuda::Pack16<T> pk[R][CH];
  ModVals<T, V> msc[CH], msh[CH];
  float ss[R] = {};
  if (active) {
    const T* xr = x + b * xl.stride_outer + (row0 - b * xl.inner) * xl.stride_inner + lane * V;
#pragma unroll
    for (int j = 0; j < R; ++j)
#pragma unroll
      for (int c = 0; c < CH; ++c) {
        pk[j][c].u = cuda::ldg_row<L1Keep>(xr + j * xl.stride_inner + c * G * V);
      }
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      sc.template load<V, L1Keep>((c * G + lane) * V, msc[c]);
      sh.template load<V, L1Keep>((c * G + lane) * V, msh[c]);
    }
#pragma unroll
    for (int j = 0; j < R; ++j) cuda::add_squares<G>(pk[j], lane, N, ss[j]);
  }
  cuda::group_sum<G, R>(ss, scratch);
  if (!active) return;
  float r[R];
#pragma unroll
  for (int j = 0; j < R; ++j) r[j] = rsqrtf(ss[j] / static_cast<float>(N) + eps);
#pragma unroll
  for (int j = 0; j < R; ++j)
#pragma unroll
    for (int c = 0; c < CH; ++c) cuda::keep_packed(pk[j][c].u);
  T* o = out + row0 * N + lane * V;
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    float one_sc[V], shf[V];
    mod_floats(msc[c], one_sc);
    mod_floats(msh[c], shf);
#pragma unroll
    for (int i = 0; i < V; ++i) one_sc[i] += 1.f;
#pragma unroll
    for (int j = 0; j < R; ++j) {
      float v[V], y[V];
      cuda::unpack16<T>(pk[j][c].u, v);
#pragma unroll
      for (int i = 0; i < V; ++i) y[i] = v[i] * r[j] * one_sc[i] + shf[i];
      cuda::store_vec<T, V, true>(o + j * N + c * G * V, y);
    }
  }
}

// Whether adaln_rows_kernel with R rows a group applies to a: no gated residual, a modulation
// constant along s, whole groups within a sample, and n == G * CH * (16 / sizeof(T)).
template <typename T, int G, int CH, int R>
bool rows_kernel_applies(const AdaLnArgs& a) {
  return !a.delta && a.scale.stride_s == 0 && a.shift.stride_s == 0 && a.x_layout.inner % R == 0 &&
         a.n == G * CH * static_cast<int64_t>(16 / sizeof(T));
}

template <typename T, bool Table, int G, int CH, int R, int MinBlocks, bool L1Keep = false>
cudaError_t launch_rows(const AdaLnArgs& a, cudaStream_t stream) {
  if (!rows_kernel_applies<T, G, CH, R>(a)) return cudaErrorInvalidValue;
  const int64_t rows = a.x_layout.rows;
  return cuda::launch_groups<G>(adaln_rows_kernel<T, Table, G, CH, R, MinBlocks, L1Keep>, rows / R, stream,
                                static_cast<const T*>(a.x), a.x_layout, a.scale, a.shift, static_cast<T*>(a.out),
                                rows, a.eps);
}

}  // namespace khub_kernels::adaln
