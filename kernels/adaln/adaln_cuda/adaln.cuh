// AdaLN row op for the shared row engine (khub_kernels/row_norm.cuh). No torch.
#pragma once
#include "adaln.h"
#include "khub_kernels/row_norm.cuh"

namespace khub_kernels::adaln {

// V modulation values in storage precision: 16 bytes on the vector path.
template <typename T, int V>
struct alignas(V * sizeof(T) == 16 ? 16 : alignof(T)) ModVals {
  T t[V];
};

// m as fp32 (word by word on the 16-byte path: cuda::unpack16).
template <typename T, int V>
__device__ __forceinline__ void mod_floats(const ModVals<T, V>& m, float (&v)[V]) {
  if constexpr (V * sizeof(T) == 16) {
    cuda::unpack16<T>(*reinterpret_cast<const uint4*>(m.t), v);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = cuda::to_float(m.t[i]);
  }
}

// One modulation vector: base (+ table), the sum rounded to T as the model's own add of two T
// tensors rounds it (the CPU implementation does the same). Kept in T between the fetch and the
// store: 8 registers a chunk instead of 16 for scale and shift in fp32, and one packed add per
// pair; AdaLN [2,8064,2048] 40.1 -> 38.2 us on the H200.
// KeepInL1 (16-byte path): the loads allocate in L1 with evict_last priority, beside rows read the
// same way (adaln_rows.cuh).
template <typename T, bool Table>
struct ModRow {
  const T* table;
  const T* base;

  template <bool KeepInL1>
  static __device__ __forceinline__ uint4 load16(const T* p) {
    if constexpr (KeepInL1) return cuda::ldg_l1<true, false>(p);
    else return cuda::ldg16(p);
  }

  template <int V, bool KeepInL1 = false>
  __device__ __forceinline__ void load(int idx, ModVals<T, V>& out) const {
    if constexpr (V * sizeof(T) == 16) {
      uint4 v = load16<KeepInL1>(base + idx);
      if constexpr (Table) v = cuda::add_rounded<T>(v, load16<KeepInL1>(table + idx));
      static_assert(sizeof(out) == sizeof(v));
      *reinterpret_cast<uint4*>(out.t) = v;
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i)
        out.t[i] = Table ? cuda::from_float<T>(cuda::to_float(base[idx + i]) + cuda::to_float(table[idx + i]))
                         : base[idx + i];
    }
  }

  template <int V>
  __device__ __forceinline__ void load(int idx, float (&v)[V]) const {
    ModVals<T, V> m;
    load<V>(idx, m);
    mod_floats(m, v);
  }
};

template <typename T, bool Table>
__device__ __forceinline__ ModRow<T, Table> mod_row(const ModSource& m, int64_t b, int64_t s) {
  return {static_cast<const T*>(m.table), static_cast<const T*>(m.base) + b * m.stride_b + s * m.stride_s};
}

// Gated: with the gated residual (delta, gate, h_out); Table: modulation = table + base. Both are
// template parameters so each kernel carries only the pointers it uses: the plain table form went
// from 72 to 64 registers.
template <typename TT, bool Gated, bool Table>
struct AdaLnOp {
  using T = TT;
  static constexpr bool kNorm = true;
  static constexpr int kMinVec = 1;
  // 16-bit plain rows of 2048 on 128 threads x 2 chunks at 1536 threads/SM: [2,2688,2048] 16.2 / 13.3
  // -> 15.5 / 12.5 us, [2,8064,2048] 38.0 -> 37.8 once rows were unpacked by words (it had been 1 us
  // slower before). The gated forms spill 16 B there and were
  // not measured, fp32 neither: those keep the default groups.
  static constexpr int kWideThreads = sizeof(TT) == 2 && !Gated ? 1536 : 0;
  static constexpr int kEarlyChunks = 0;  // early fetch spilled: 16.8 -> 21.6 us (row_norm.cuh)

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
      ModVals<T, V> sc, sh;
    };

    template <int V>
    __device__ __forceinline__ void fetch(int idx, Pre<V>& p) const {
      scale.load<V>(idx, p.sc);
      shift.load<V>(idx, p.sh);
    }

    template <int V>
    __device__ __forceinline__ void store(int idx, const float (&v)[V], float r, const Pre<V>& p) const {
      float y[V], sc[V], sh[V];
      mod_floats(p.sc, sc);
      mod_floats(p.sh, sh);
#pragma unroll
      for (int i = 0; i < V; ++i) y[i] = v[i] * r * (1.f + sc[i]) + sh[i];
      cuda::store_vec<T, V, true>(out + idx, y);
    }
  };

  __device__ __forceinline__ Row row(int64_t r) const {
    const int64_t b = cuda::div_nonneg(r, xl.inner), s = r - b * xl.inner;
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
