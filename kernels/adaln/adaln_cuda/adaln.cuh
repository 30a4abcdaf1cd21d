// AdaLN row op for the shared row engine (khub_kernels/row_norm.cuh). No torch.
#pragma once
#include "adaln.h"
#include "khub_kernels/row_norm.cuh"

namespace khub_kernels::adaln {

template <typename T, bool Table>
struct ModRow {
  const T* table;
  const T* base;

  template <int V>
  __device__ __forceinline__ void load(int idx, float (&v)[V]) const {
    cuda::load_vec<T, V>(base + idx, v);
    if constexpr (Table) {
      float t[V];
      cuda::load_vec<T, V>(table + idx, t);
#pragma unroll
      for (int i = 0; i < V; ++i) v[i] += t[i];
    }
  }
};

template <typename T, bool Table>
__device__ __forceinline__ ModRow<T, Table> mod_row(const ModSource& m, int64_t b, int64_t s) {
  return {static_cast<const T*>(m.table), static_cast<const T*>(m.base) + b * m.stride_b + s * m.stride_s};
}

// Gated: with the gated residual (delta, gate, h_out); Table: modulation = table + base. Both are
// template parameters so each kernel carries only the pointers it uses: the plain table form went
// from 72 to 64 registers (docs/gpu-measurements.md, version 13).
template <typename TT, bool Gated, bool Table>
struct AdaLnOp {
  using T = TT;
  static constexpr bool kNorm = true;
  static constexpr int kMinVec = 1;
  static constexpr int kWideThreads = 0;
  static constexpr int kEarlyChunks = 0;  // measured: docs/gpu-measurements.md, version 11

  const T* x;
  RowLayout xl;
  const T* delta;
  RowLayout dl;
  ModSource gate, scale, shift;
  T* out;
  T* h_out;
  int64_t n;

  struct Row {
    const T* x;
    const T* delta;
    ModRow<T, Table> gate, scale, shift;
    T* out;
    T* h_out;

    template <int V, bool Side>
    __device__ __forceinline__ void load(int idx, float (&v)[V]) const {
      cuda::load_vec<T, V>(x + idx, v);
      if constexpr (Gated) {
        float d[V], g[V];
        cuda::load_vec<T, V>(delta + idx, d);
        gate.load<V>(idx, g);
#pragma unroll
        for (int i = 0; i < V; ++i) v[i] = cuda::round_to<T>(v[i] + g[i] * d[i]);
        if constexpr (Side) cuda::store_vec<T, V, true>(h_out + idx, v);
      }
    }

    template <int CH, int G>
    __device__ __forceinline__ void combine(cuda::Pack16<T> (&pk)[CH], int lane, int n) const {
      constexpr int V = 16 / sizeof(T);
      if constexpr (!Gated) return;
      cuda::fold_side_input<CH, G>(pk, lane, n, delta, h_out, [gate = gate](int idx, float (&a)[V], const float (&d)[V]) {
        float g[V];
        gate.template load<V>(idx, g);
#pragma unroll
        for (int i = 0; i < V; ++i) a[i] += g[i] * d[i];
      });
    }

    template <int V>
    struct Pre {
      float sc[V], sh[V];
    };

    template <int V>
    __device__ __forceinline__ void fetch(int idx, Pre<V>& p) const {
      scale.load<V>(idx, p.sc);
      shift.load<V>(idx, p.sh);
    }

    template <int V>
    __device__ __forceinline__ void store(int idx, const float (&v)[V], float r, const Pre<V>& p) const {
      float y[V];
#pragma unroll
      for (int i = 0; i < V; ++i) y[i] = v[i] * r * (1.f + p.sc[i]) + p.sh[i];
      cuda::store_vec<T, V, true>(out + idx, y);
    }
  };

  __device__ __forceinline__ Row row(int64_t r) const {
    const int64_t b = r / xl.inner, s = r - b * xl.inner;
    return Row{x + b * xl.stride_outer + s * xl.stride_inner,
               Gated ? delta + cuda::row_offset(dl, r) : nullptr,
               Gated ? mod_row<T, Table>(gate, b, s) : ModRow<T, Table>{nullptr, nullptr},
               mod_row<T, Table>(scale, b, s),
               mod_row<T, Table>(shift, b, s),
               out + r * n,
               Gated ? h_out + r * n : nullptr};
  }
};

}  // namespace khub_kernels::adaln
