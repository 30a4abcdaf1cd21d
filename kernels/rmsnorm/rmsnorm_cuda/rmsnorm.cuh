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
  static constexpr int kEarlyChunks = 0;  // early fetch: [4,4096,3072] 54.0 -> 58.0 (row_norm.cuh)

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

// The fused add of one chunk: s = round(x + residual), summed in fp32 and rounded to T as the row
// engine does, into x's chunk.
template <typename T>
__device__ __forceinline__ void add_chunk(cuda::Pack16<T>& x, const cuda::Pack16<T>& residual) {
  constexpr int V = 16 / sizeof(T);
  float a[V], b[V];
  cuda::unpack16<T>(x.u, a);
  cuda::unpack16<T>(residual.u, b);
#pragma unroll
  for (int i = 0; i < V; ++i) x.t[i] = cuda::from_float<T>(a[i] + b[i]);
}

// Stores one 16-byte chunk x of a normalised row: (x * r, rounded to T first when RoundFirst) * w,
// w the matching 16 bytes of the weight. The two dedicated kernels' store.
template <typename T, bool RoundFirst, bool StreamStore>
__device__ __forceinline__ void store_chunk(T* out, const uint4& x, const uint4& w, float r) {
  constexpr int V = 16 / sizeof(T);
  float wv[V], xv[V], y[V];
  cuda::unpack16<T>(w, wv);
  cuda::unpack16<T>(x, xv);
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const float v = xv[i] * r;
    y[i] = (RoundFirst ? cuda::round_to<T>(v) : v) * wv[i];
  }
  cuda::store_vec<T, V, StreamStore>(out, y);
}

// How the two-pass kernel below reads its row. Stream: both reads streaming (no L1 allocation; the
// second comes from L2). L2Hint: as Stream, pass 1 marking the lines L2 evict-last and pass 2
// evict-first. L1Keep: pass 1 allocates the lines in L1 evict-last and pass 2 reads them
// evict-first, so it can hit L1 (16-bit [2,2688,2048] graph 11.1 -> 10.0 us). L1KeepL2Hint: the
// same priorities in L2 too, as inductor marks its two-pass reductions (fp32 rows of 3072, graph
// 96.3 -> 95.7 us).
enum class RowRead { Stream, L2Hint, L1Keep, L1KeepL2Hint };

// One of the two reads of a thread's chunks of the row xr (chunks past n skipped).
template <int G, int CH, RowRead R, bool First, typename T>
__device__ __forceinline__ void read_row(cuda::Pack16<T> (&pk)[CH], const T* xr, int lane, int n) {
  constexpr int V = 16 / sizeof(T);
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    const int idx = (c * G + lane) * V;
    if (idx >= n) continue;
    if constexpr (R == RowRead::L2Hint) pk[c].u = cuda::ldg_stream_l2<First>(xr + idx);
    else if constexpr (R == RowRead::L1Keep) pk[c].u = cuda::ldg_l1<First, false>(xr + idx);
    else if constexpr (R == RowRead::L1KeepL2Hint) pk[c].u = cuda::ldg_l1<First, true>(xr + idx);
    else pk[c].u = cuda::ldg_stream(xr + idx);
  }
}

// RMSNorm without a residual, weight in T, in two passes over the row: pass 1 loads the row's
// chunks and sums their squares; after the reduction pass 2 loads them again (from L1 or L2: the
// row was read microseconds before) with the weight and stores. Nothing of the row is live across
// the reduction, so it runs 2048 threads per SM. Its own kernel rather than a
// row-engine option: the engine's version of it, with the op's run-time weight and rounding
// branches, ran 1-3 us slower. RoundFirst: round(x * r) to T before the weight (Qwen3; diffusers
// with a T weight), else one rounding (F.rms_norm). R: how the two reads go (RowRead).
// StreamStore: cache-streaming output stores (cuda::st_out), else plain. Two probe options, as
// inductor's kernel for fp32 rows of 3072 has them: WeightKeep, the weight's chunks allocated in L1
// and L2 evict-last; FixedN > 0, rows of exactly FixedN elements, contiguous (n and the row offset
// compile-time; launch_reload checks the layout).
template <typename T, int G, int CH, int MinBlocks, bool RoundFirst, RowRead R, bool StreamStore,
          bool WeightKeep = false, int FixedN = 0>
__global__ void __launch_bounds__(cuda::row_threads<G>(), MinBlocks)
    rms_norm_reload_kernel(const T* __restrict__ x, RowLayout xl, const T* __restrict__ w, T* __restrict__ out,
                           int64_t rows, int n_arg, float eps) {
  constexpr int V = 16 / sizeof(T);
  const int n = FixedN > 0 ? FixedN : n_arg;
  cuda::wait_for_previous_grid();
  __shared__ float scratch[G > 32 ? G / 32 : 1];
  const auto [lane, row, active] = cuda::group_row<G>(rows);
  const T* xr = !active ? x : FixedN > 0 ? x + row * FixedN : x + cuda::row_offset(xl, row);
  float ss = 0.f;
  if (active) {
    cuda::Pack16<T> pk[CH];
    read_row<G, CH, R, true>(pk, xr, lane, n);
    cuda::add_squares<G>(pk, lane, n, ss);
  }
  ss = cuda::group_sum<G>(ss, scratch);
  if (!active) return;
  const float r = rsqrtf(ss / static_cast<float>(n) + eps);
  cuda::Pack16<T> pk[CH];
  read_row<G, CH, R, false>(pk, xr, lane, n);
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    const int idx = (c * G + lane) * V;
    if (idx >= n) continue;
    const uint4 wc = WeightKeep ? cuda::ldg_l1<true, true>(w + idx) : cuda::ldg16(w + idx);
    store_chunk<T, RoundFirst, StreamStore>(out + row * n + idx, pk[c].u, wc, r);
  }
}

template <typename T, int G, int CH, int MinBlocks, RowRead R = RowRead::Stream, bool StreamStore = true,
          bool WeightKeep = false, int FixedN = 0>
cudaError_t launch_reload(const T* x, const RowLayout& xl, const T* w, T* out, int n, float eps, bool round_first,
                          cudaStream_t stream) {
  if constexpr (FixedN > 0) {
    const bool contiguous = (xl.inner == xl.rows || xl.stride_outer == xl.inner * FixedN) && xl.stride_inner == FixedN;
    if (n != FixedN || !contiguous) return cudaErrorInvalidValue;
  }
  if (round_first)
    return cuda::launch_groups<G>(rms_norm_reload_kernel<T, G, CH, MinBlocks, true, R, StreamStore, WeightKeep, FixedN>,
                                  xl.rows, stream, x, xl, w, out, xl.rows, n, eps);
  return cuda::launch_groups<G>(rms_norm_reload_kernel<T, G, CH, MinBlocks, false, R, StreamStore, WeightKeep, FixedN>,
                                xl.rows, stream, x, xl, w, out, xl.rows, n, eps);
}

// RMSNorm, weight in T, for rows of exactly G x CH 16-byte chunks, in one pass: the row stays
// packed in registers across the reduction. The row engine's schedule without its Row state and
// run-time weight and rounding branches, and with 32-bit offsets within the row: q/k heads
// [1,8192,32,128] 36.6 -> 36.0 us, [2,8064,2048] 36.2 -> 35.6, [1,8192,4096] 37.4 -> 36.3,
// [1,2048,4096] 12.9 -> 11.9. L1Keep: the row is read into L1 (cuda::ldg_row). WeightFirst: the
// weight's chunks are loaded with the row's, before the reduction, so no L2 / DRAM round trip
// follows it (4 registers a chunk; 0.2-0.4 us faster cold, rmsnorm.cu). StreamStore:
// cache-streaming output stores (cuda::st_out), else plain. Residual: the fused add, s = round(x +
// residual) stored to res_out and normalised, the sum in fp32 rounded to T as the engine does
// (res, rl, res_out unused without it).
template <typename T, int G, int CH, int MinBlocks, bool RoundFirst, bool L1Keep = false, bool WeightFirst = false,
          bool StreamStore = true, bool Residual = false>
__global__ void __launch_bounds__(cuda::row_threads<G>(), MinBlocks)
    rms_norm_keep_kernel(const T* __restrict__ x, RowLayout xl, const T* __restrict__ res, RowLayout rl,
                         const T* __restrict__ w, T* __restrict__ out, T* __restrict__ res_out, int64_t rows,
                         float eps) {
  constexpr int V = 16 / sizeof(T), N = G * CH * V;
  constexpr int RPB = cuda::row_threads<G>() / G;
  cuda::wait_for_previous_grid();
  __shared__ float scratch[G > 32 ? G / 32 : 1];
  const int lane = threadIdx.x % G;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * RPB + threadIdx.x / G;
  const bool active = row < rows;
  const T* xr = (active ? x + cuda::row_offset(xl, row) : x) + lane * V;
  const T* wl = w + lane * V;
  cuda::Pack16<T> pk[CH], wk[WeightFirst ? CH : 1], rk[Residual ? CH : 1];
  float ss = 0.f;
  if (active) {
#pragma unroll
    for (int c = 0; c < CH; ++c) pk[c].u = cuda::ldg_row<L1Keep>(xr + c * G * V);
    if constexpr (Residual) {
      const T* rr = res + cuda::row_offset(rl, row) + lane * V;
#pragma unroll
      for (int c = 0; c < CH; ++c) rk[c].u = cuda::ldg_row<L1Keep>(rr + c * G * V);
    }
    if constexpr (WeightFirst) {
#pragma unroll
      for (int c = 0; c < CH; ++c) wk[c].u = cuda::ldg_now(wl + c * G * V);
    }
    // The residual's loads go out before the weight's, and the sum after both: the order measured
    // (cuda::fold_side_input issues its loads where it is called, which moves them past the
    // weight's and changes the schedule; not measured).
    if constexpr (Residual) {
#pragma unroll
      for (int c = 0; c < CH; ++c) {
        add_chunk(pk[c], rk[c]);
        cuda::st_out<StreamStore>(res_out + row * N + lane * V + c * G * V, pk[c].u);
      }
    }
    cuda::add_squares<G>(pk, lane, N, ss);
  }
  ss = cuda::group_sum<G>(ss, scratch);
  if (!active) return;
  const float r = rsqrtf(ss / static_cast<float>(N) + eps);
  T* o = out + row * N + lane * V;
#pragma unroll
  for (int c = 0; c < CH; ++c) cuda::keep_packed(pk[c].u);
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    uint4 wc;
    if constexpr (WeightFirst) wc = wk[c].u;
    else wc = cuda::ldg16(wl + c * G * V);
    store_chunk<T, RoundFirst, StreamStore>(o + c * G * V, pk[c].u, wc, r);
  }
}

// Returns cudaErrorInvalidValue unless n == G * CH * (16 / sizeof(T)).
template <typename T, int G, int CH, int MinBlocks, bool L1Keep = false, bool WeightFirst = false,
          bool StreamStore = true>
cudaError_t launch_keep(const T* x, const RowLayout& xl, const T* w, T* out, int n, float eps, bool round_first,
                        cudaStream_t stream) {
  if (n != G * CH * (16 / static_cast<int>(sizeof(T)))) return cudaErrorInvalidValue;
  if (round_first)
    return cuda::launch_groups<G>(rms_norm_keep_kernel<T, G, CH, MinBlocks, true, L1Keep, WeightFirst, StreamStore>,
                                  xl.rows, stream, x, xl, nullptr, RowLayout{}, w, out, nullptr, xl.rows, eps);
  return cuda::launch_groups<G>(rms_norm_keep_kernel<T, G, CH, MinBlocks, false, L1Keep, WeightFirst, StreamStore>,
                                xl.rows, stream, x, xl, nullptr, RowLayout{}, w, out, nullptr, xl.rows, eps);
}

// Launches a fused add + RMSNorm kernel (the keep kernel with Residual, or the two-pass one) for rows
// of N elements: rounding_first for the roundings that round x * r before the weight, fused for one
// rounding. cudaErrorInvalidValue unless a.n == N.
template <typename T, int G, int N, typename Kernel>
cudaError_t launch_add(const RmsNormArgs& a, Kernel rounding_first, Kernel fused, cudaStream_t stream) {
  if (a.n != N) return cudaErrorInvalidValue;
  const int64_t rows = a.x_layout.rows;
  return cuda::launch_groups<G>(a.rounding != Rounding::Fused ? rounding_first : fused, rows, stream,
                                static_cast<const T*>(a.x), a.x_layout, static_cast<const T*>(a.residual),
                                a.residual_layout, static_cast<const T*>(a.weight), static_cast<T*>(a.out),
                                static_cast<T*>(a.residual_out), rows, a.eps);
}

// The fused add + RMSNorm on the keep kernel (Residual), the weight loaded first.
template <typename T, int G, int CH, int MinBlocks, bool WeightFirst = true, bool StreamStore = true>
cudaError_t launch_add_keep(const RmsNormArgs& a, cudaStream_t stream) {
  return launch_add<T, G, G * CH * (16 / static_cast<int>(sizeof(T)))>(
      a, rms_norm_keep_kernel<T, G, CH, MinBlocks, true, false, WeightFirst, StreamStore, true>,
      rms_norm_keep_kernel<T, G, CH, MinBlocks, false, false, WeightFirst, StreamStore, true>, stream);
}

// The fused add + RMSNorm in two passes, weight in T, rows of exactly G x CH chunks. Pass 1 reads x
// and the residual (R's first read), stores their sum s = round(x + residual) to res_out and sums
// its squares; after the reduction pass 2 gets s back, Recompute: by reading x and the residual
// again (R's second read: L1 or L2) and adding them, as inductor's two-pass reductions do; else by
// reading res_out (this thread's own stores, from L2: 6-7 us slower at [1,8192,4096] on 256 x 2).
// Nothing of the row is live across the reduction. x and the residual are read on the non-coherent
// path twice, so neither may alias the outputs (the op allocates them).
template <typename T, int G, int CH, int MinBlocks, bool RoundFirst, RowRead R, bool StreamStore, bool Recompute>
__global__ void __launch_bounds__(cuda::row_threads<G>(), MinBlocks)
    rms_norm_add_reload_kernel(const T* __restrict__ x, RowLayout xl, const T* __restrict__ res, RowLayout rl,
                               const T* __restrict__ w, T* __restrict__ out, T* __restrict__ res_out, int64_t rows,
                               float eps) {
  constexpr int V = 16 / sizeof(T), N = G * CH * V;
  cuda::wait_for_previous_grid();
  __shared__ float scratch[G > 32 ? G / 32 : 1];
  const auto [lane, row, active] = cuda::group_row<G>(rows);
  const T* xr = active ? x + cuda::row_offset(xl, row) : x;
  const T* rr = active ? res + cuda::row_offset(rl, row) : res;
  T* so = res_out + row * N;
  auto add_rows = [](cuda::Pack16<T>(&pk)[CH], const cuda::Pack16<T>(&rk)[CH]) {
#pragma unroll
    for (int c = 0; c < CH; ++c) add_chunk(pk[c], rk[c]);
  };
  float ss = 0.f;
  if (active) {
    cuda::Pack16<T> pk[CH], rk[CH];
    read_row<G, CH, R, true>(pk, xr, lane, N);
    read_row<G, CH, R, true>(rk, rr, lane, N);
    add_rows(pk, rk);
#pragma unroll
    for (int c = 0; c < CH; ++c) cuda::st_out<StreamStore>(so + (c * G + lane) * V, pk[c].u);
    cuda::add_squares<G>(pk, lane, N, ss);
  }
  ss = cuda::group_sum<G>(ss, scratch);
  if (!active) return;
  const float r = rsqrtf(ss / static_cast<float>(N) + eps);
  cuda::Pack16<T> pk[CH];
  if constexpr (Recompute) {
    cuda::Pack16<T> rk[CH];
    read_row<G, CH, R, false>(pk, xr, lane, N);
    read_row<G, CH, R, false>(rk, rr, lane, N);
    add_rows(pk, rk);
  } else {
#pragma unroll
    for (int c = 0; c < CH; ++c) pk[c].u = *reinterpret_cast<const uint4*>(so + (c * G + lane) * V);
  }
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    const int idx = (c * G + lane) * V;
    store_chunk<T, RoundFirst, StreamStore>(out + row * N + idx, pk[c].u, cuda::ldg16(w + idx), r);
  }
}

template <typename T, int G, int CH, int MinBlocks, RowRead R, bool StreamStore, bool Recompute>
cudaError_t launch_add_reload(const RmsNormArgs& a, cudaStream_t stream) {
  return launch_add<T, G, G * CH * (16 / static_cast<int>(sizeof(T)))>(
      a, rms_norm_add_reload_kernel<T, G, CH, MinBlocks, true, R, StreamStore, Recompute>,
      rms_norm_add_reload_kernel<T, G, CH, MinBlocks, false, R, StreamStore, Recompute>, stream);
}

}  // namespace khub_kernels::rmsnorm
