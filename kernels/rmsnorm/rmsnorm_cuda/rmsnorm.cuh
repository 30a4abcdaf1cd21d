// RMSNorm row op for the shared row engine (khub_kernels/row_norm.cuh). No torch.
#pragma once
#include "khub_kernels/row_norm.cuh"
#include "rmsnorm.h"

namespace khub_kernels::rmsnorm {

template <typename TT>
struct RmsNormOp {
  using T = TT;
  static constexpr bool kNorm = true;
  static constexpr int kMinVec = 1;
  static constexpr int kWideThreads = 1536;
  static constexpr int kEarlyChunks = 0;  // measured: docs/gpu-measurements.md, version 11

  const T* x;
  RowLayout xl;
  const T* res;
  RowLayout rl;
  const void* w;
  bool w_f32;
  T* out;
  T* res_out;
  int64_t n;
  Rounding rounding;

  struct Row {
    const T* x;
    const T* res;
    T* res_out;
    T* out;
    const void* w;
    bool w_f32;
    Rounding rounding;

    template <int V, bool Side>
    __device__ __forceinline__ void load(int idx, float (&v)[V]) const {
      cuda::load_vec<T, V>(x + idx, v);
      if (res) {
        float rv[V];
        cuda::load_vec<T, V>(res + idx, rv);
#pragma unroll
        for (int i = 0; i < V; ++i) v[i] = cuda::round_to<T>(v[i] + rv[i]);
        if constexpr (Side) cuda::store_vec<T, V, true>(res_out + idx, v);
      }
    }

    template <int CH, int G>
    __device__ __forceinline__ void combine(cuda::Pack16<T> (&pk)[CH], int lane, int n) const {
      constexpr int V = 16 / sizeof(T);
      if (!res) return;
      cuda::fold_side_input<CH, G>(pk, lane, n, res, res_out, [](int, float (&a)[V], const float (&b)[V]) {
#pragma unroll
        for (int i = 0; i < V; ++i) a[i] += b[i];
      });
    }

    template <int V>
    struct Pre {
      float w[V];
    };

    template <int V>
    __device__ __forceinline__ void fetch(int idx, Pre<V>& p) const {
      if (!w) return;
      if (w_f32) cuda::load_f32<V>(static_cast<const float*>(w) + idx, p.w);
      else cuda::load_vec<T, V>(static_cast<const T*>(w) + idx, p.w);
    }

    template <int V>
    __device__ __forceinline__ void store(int idx, const float (&v)[V], float r, const Pre<V>& p) const {
      float y[V];
      if (!w) {
#pragma unroll
        for (int i = 0; i < V; ++i) y[i] = v[i] * r;
      } else if (rounding == Rounding::Fused || (rounding == Rounding::Diffusers && w_f32)) {
#pragma unroll
        for (int i = 0; i < V; ++i) y[i] = v[i] * r * p.w[i];
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) y[i] = cuda::round_to<T>(v[i] * r) * p.w[i];
      }
      cuda::store_vec<T, V, true>(out + idx, y);
    }
  };

  __device__ __forceinline__ Row row(int64_t r) const {
    return Row{x + cuda::row_offset(xl, r), res ? res + cuda::row_offset(rl, r) : nullptr,
               res_out ? res_out + r * n : nullptr, out + r * n, w, w_f32, rounding};
  }
};

}  // namespace khub_kernels::rmsnorm
