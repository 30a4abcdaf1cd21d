// RoPE device code: trig lookup per token, the pair rotation, the elementwise q/k kernel and the
// fused RMSNorm + RoPE row op for the shared row engine. No torch.
#pragma once
#include "khub_kernels/row_norm.cuh"
#include "rope3d.h"

namespace khub_kernels::rope3d {

// Trig source of one token (b, s). The mode is a template parameter: a kernel specialised to one
// mode has no branches between modes and no registers or stack for the others (table mode: 64 -> 48
// registers, which let it take wide groups).
// Packed (Table only): cos and sin interleaved in one [P, F, 2] buffer (sin = cos + 1), so a pair's
// trig is one 8-byte load instead of two scalar ones.
template <TrigMode M, bool Packed = false>
struct TrigRow {
  const float* cos;  // Api: row pointers; Table: table bases
  const float* sin;
  const float* freqs;
  int32_t off[3];  // Table: element offset of the token's table row per axis (row * f)
  float g[3];      // Coords: normalised coordinate per axis
  int pad_pairs;
  int f;

  // Table and Coords modes: cos/sin of the pairs of channels idx .. idx + V - 1 (idx even; both
  // channels of a pair share them). Api mode reads per-channel values at the store instead.
  template <int V>
  __device__ __forceinline__ void get(int idx, float (&c)[V / 2], float (&s)[V / 2]) const {
    if constexpr (M == TrigMode::Api) return;
    // Pair p = idx / 2 + q has j = p - pad_pairs (identity while j < 0), frequency k = j / 3 and
    // axis a = j % 3: one division for the vector, then a and k step along.
    const int j = idx / 2 - pad_pairs;
    int k = j >= 0 ? j / 3 : 0;
    int a = j - 3 * k;
#pragma unroll
    for (int q = 0; q < V / 2; ++q) {
      float cv = 1.f, sv = 0.f;
      if (a >= 0) {
        // Selects, not a run-time array index (which would put off/g in local memory).
        if constexpr (M == TrigMode::Table) {
          const int32_t o = (a == 0 ? off[0] : (a == 1 ? off[1] : off[2])) + k;
          if constexpr (Packed) {
            const float2 cs = __ldg(reinterpret_cast<const float2*>(cos) + o);
            cv = cs.x;
            sv = cs.y;
          } else {
            cv = __ldg(cos + o);
            sv = __ldg(sin + o);
          }
        } else {
          const float ga = a == 0 ? g[0] : (a == 1 ? g[1] : g[2]);
          const float angle = __fmul_rn(__ldg(freqs + k), __fsub_rn(__fmul_rn(ga, 2.f), 1.f));
          sincosf(angle, &sv, &cv);
        }
      }
      if (++a == 3) {
        a = 0;
        ++k;
      }
      c[q] = cv;
      s[q] = sv;
    }
  }
};

// The trig source of sample b, position s.
template <TrigMode M, bool Packed = false>
__device__ __forceinline__ TrigRow<M, Packed> trig_row_at(const TrigParams& t, int64_t b, int64_t s) {
  const int64_t o = b * t.stride_b + s * t.stride_s;
  TrigRow<M, Packed> r{nullptr, nullptr, t.freqs, {0, 0, 0}, {0.f, 0.f, 0.f}, t.pad_pairs, t.f};
  if constexpr (M == TrigMode::Api) {
    r.cos = t.cos + o;
    r.sin = t.sin + o;
  } else if constexpr (M == TrigMode::Table) {
    r.cos = t.cos_table;
    r.sin = t.sin_table;
#pragma unroll
    for (int a = 0; a < 3; ++a) r.off[a] = __ldg(t.index + o + a) * t.f;
  } else {
#pragma unroll
    for (int a = 0; a < 3; ++a) r.g[a] = __ldg(t.coords + o + a);
  }
  return r;
}

template <TrigMode M, bool Packed = false>
__device__ __forceinline__ TrigRow<M, Packed> trig_row(const TrigParams& t, int64_t row) {
  const int64_t b = cuda::div_nonneg(row, t.seq);
  return trig_row_at<M, Packed>(t, b, row - b * t.seq);
}

// out = x * cos + rotate(x) * sin, each product and the sum rounded to fp32 (eager's order). c and
// s hold one value per channel (N == V) or one per pair (N == V / 2). Fma (the fused norm + RoPE,
// which has no eager twin to match bit for bit): x * cos added to the other product in one fused
// multiply-add, one rounding fewer and two instructions fewer per pair.
template <typename T, int V, bool Stream, int N, bool Fma = false>
__device__ __forceinline__ void rotate_store(T* out, const float (&v)[V], const float (&c)[N], const float (&s)[N]) {
  constexpr int P = N / (V / 2);
  static_assert(P == 1 || P == 2);
  float y[V];
#pragma unroll
  for (int q = 0; q < V / 2; ++q) {
    const float x0 = v[2 * q], x1 = v[2 * q + 1];
    if constexpr (Fma) {
      y[2 * q] = __fmaf_rn(x0, c[P * q], __fmul_rn(-x1, s[P * q]));
      y[2 * q + 1] = __fmaf_rn(x1, c[P * q + P - 1], __fmul_rn(x0, s[P * q + P - 1]));
    } else {
      y[2 * q] = __fadd_rn(__fmul_rn(x0, c[P * q]), __fmul_rn(-x1, s[P * q]));
      y[2 * q + 1] = __fadd_rn(__fmul_rn(x1, c[P * q + P - 1]), __fmul_rn(x0, s[P * q + P - 1]));
    }
  }
  cuda::store_vec<T, V, Stream>(out, y);
}

// RoPE row op, with the RMSNorm first when Norm. With k, rows interleave q and k of one token
// (row 2t = q, 2t + 1 = k) so both read the token's trig while it is in L1.
// StreamOut: cache-streaming stores (cuda::st_out): faster for the plain rotation and for the fused
// norm's per-token kernel, slower for the fused norm on one group per row.
// M: the trig mode; TrigParams::mode must equal it. Packed: see TrigRow.
template <typename TT, bool Norm, TrigMode M, bool StreamOut = !Norm, bool Packed = false>
struct RopeRowOp {
  static_assert(!Packed || M == TrigMode::Table);
  using T = TT;
  static constexpr bool kNorm = Norm;
  static constexpr int kMinVec = 2;
  static constexpr int kWideThreads = Norm ? 0 : 1024;
  // Early fetch (row_norm.cuh): fused norm + RoPE 39.0 -> 37.7 us, plain table RoPE 33.2 -> 36.1.
  static constexpr int kEarlyChunks = Norm ? 4 : 0;

  const T* q;
  RowLayout ql;
  const T* k;
  RowLayout kl;
  T* qo;
  T* ko;
  const void* qw;
  const void* kw;
  bool w_f32;
  int64_t d;
  TrigParams t;

  struct Row {
    const T* x;
    T* out;
    const void* w;
    bool w_f32;
    TrigRow<M, Packed> tr;

    template <int V, bool Side>
    __device__ __forceinline__ void load(int idx, float (&v)[V]) const {
      cuda::load_vec<T, V>(x + idx, v);
    }

    template <int CH, int G>
    __device__ __forceinline__ void combine(cuda::Pack16<T> (&)[CH], int, int) const {}

    // Table/Coords trig is fetched ahead (one value per pair); Api trig (per channel) and the
    // norm's weight are loaded at the store, which keeps the prefetched registers to 8 a chunk.
    template <int V>
    struct Pre {
      float c[V / 2], s[V / 2];
    };

    template <int V>
    __device__ __forceinline__ void fetch(int idx, Pre<V>& p) const {
      tr.get<V>(idx, p.c, p.s);
    }

    template <int V>
    __device__ __forceinline__ void store(int idx, const float (&v)[V], float r, const Pre<V>& p) const {
      float y[V];
      if (!Norm) {
#pragma unroll
        for (int i = 0; i < V; ++i) y[i] = v[i];
      } else if (w) {
        if (w_f32) cuda::load_f32<V>(static_cast<const float*>(w) + idx, y);
        else cuda::load_vec<T, V>(static_cast<const T*>(w) + idx, y);
#pragma unroll
        for (int i = 0; i < V; ++i) y[i] *= v[i] * r;
      } else {
#pragma unroll
        for (int i = 0; i < V; ++i) y[i] = v[i] * r;
      }
      if constexpr (M == TrigMode::Api) {
        float c[V], s[V];
        cuda::load_f32<V>(tr.cos + idx, c);
        cuda::load_f32<V>(tr.sin + idx, s);
        rotate_store<T, V, StreamOut, V, Norm>(out + idx, y, c, s);
      } else {
        rotate_store<T, V, StreamOut, V / 2, Norm>(out + idx, y, p.c, p.s);
      }
    }

    // store() for a T weight, with no run-time branch on the weight's kind (same values).
    template <int V>
    __device__ __forceinline__ void store_t_weight(int idx, const float (&v)[V], float r, const Pre<V>& p) const {
      static_assert(Norm && M != TrigMode::Api && V * sizeof(T) == 16);
      float wv[V], y[V];
      cuda::load_vec<T, V>(static_cast<const T*>(w) + idx, wv);
#pragma unroll
      for (int i = 0; i < V; ++i) y[i] = wv[i] * (v[i] * r);
      rotate_store<T, V, StreamOut, V / 2, true>(out + idx, y, p.c, p.s);
    }
  };

  __device__ __forceinline__ Row row(int64_t r) const {
    const bool is_k = k && (r & 1);
    const int64_t rr = k ? r >> 1 : r;
    return Row{is_k ? k + cuda::row_offset(kl, rr) : q + cuda::row_offset(ql, rr), (is_k ? ko : qo) + rr * d,
               is_k ? kw : qw, w_f32, trig_row<M, Packed>(t, rr)};
  }

  // The q and k rows of one token (k required), the row offsets and the trig row worked out once.
  // Lean: the token's (b, s) from one multiply-high division (t.seq_div; tokens < 2^31), reused for
  // q's and k's offsets where their layouts split rows by seq, instead of up to two division
  // sequences (ncu finds the fused kernel issue-bound).
  template <bool Lean = false>
  __device__ __forceinline__ void token_rows(int64_t token, Row& qr, Row& kr) const {
    auto same_layout = [&] {
      return kl.inner == ql.inner && kl.stride_outer == ql.stride_outer && kl.stride_inner == ql.stride_inner;
    };
    if constexpr (Lean) {
      const uint32_t tk = static_cast<uint32_t>(token), b = cuda::fast_div(t.seq_div, tk);
      const uint32_t s = tk - b * t.seq_div.d;
      const TrigRow<M, Packed> tr = trig_row_at<M, Packed>(t, b, s);
      auto offset = [&](const RowLayout& l) {
        return l.inner == t.seq ? int64_t{b} * l.stride_outer + int64_t{s} * l.stride_inner : cuda::row_offset(l, token);
      };
      const int64_t qoff = offset(ql);
      const int64_t koff = same_layout() ? qoff : offset(kl);
      qr = Row{q + qoff, qo + token * d, qw, w_f32, tr};
      kr = Row{k + koff, ko + token * d, kw, w_f32, tr};
    } else {
      const TrigRow<M, Packed> tr = trig_row<M, Packed>(t, token);
      const int64_t qoff = cuda::row_offset(ql, token);
      const int64_t koff = same_layout() ? qoff : cuda::row_offset(kl, token);
      qr = Row{q + qoff, qo + token * d, qw, w_f32, tr};
      kr = Row{k + koff, ko + token * d, kw, w_f32, tr};
    }
  }
};

// Table-mode RoPE of q and k with one group of G threads per token, with the RMSNorm first when
// Op::kNorm: each thread holds the same CH chunks of the token's q row and k row, fetches their trig
// once (before the reduction), reduces both sums in one step and stores both rows. Against one
// group per row this halves the trig gathers and their registers and the barriers per row.
// TWeight (norm only): q and k weights in T, stored without the run-time branches on the weight's
// kind (ncu finds the fused kernel issue-bound). Op is RopeRowOp<T, Norm, Table, Stream>.
// L1Keep: q and k loads allocate in L1 (evict_last) instead of bypassing it (a probe option).
// Lean (the fused norm's launchers; a probe option of the plain one): token_rows<true>,
// rows of exactly G x CH chunks (n a constant: no per-chunk bounds checks) and the mean of squares
// as a multiply by the constant 1 / n (exact for a power-of-two n; no IEEE division's checks).
template <typename Op, int G, int CH, int MinBlocks, bool TWeight, bool L1Keep = false, bool Lean = false>
__global__ void __launch_bounds__(cuda::row_threads<G>(), MinBlocks)
    rope_token_kernel(const Op op, int64_t tokens, int n_arg, float eps) {
  using T = typename Op::T;
  using Row = typename Op::Row;
  static_assert(Op::kNorm || !TWeight);
  constexpr int V = 16 / sizeof(T);
  constexpr int TPB = cuda::row_threads<G>() / G;  // tokens per block
  using Pre = typename Row::template Pre<V>;
  const int n = Lean ? G * CH * V : n_arg;
  cuda::wait_for_previous_grid();
  __shared__ float scratch[2 * (G > 32 ? G / 32 : 1)];
  const int lane = threadIdx.x % G;
  const int64_t token = static_cast<int64_t>(blockIdx.x) * TPB + threadIdx.x / G;
  const bool active = token < tokens;
  cuda::Pack16<T> pk[2][CH];
  Pre pre[CH];
  float ss[2] = {0.f, 0.f};
  Row rows[2]{};
  if (active) {
    op.template token_rows<Lean>(token, rows[0], rows[1]);
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int c = 0; c < CH; ++c)
        if ((c * G + lane) * V < n) pk[j][c].u = cuda::ldg_row<L1Keep>(rows[j].x + (c * G + lane) * V);
#pragma unroll
    for (int c = 0; c < CH; ++c)
      if ((c * G + lane) * V < n) rows[0].template fetch<V>((c * G + lane) * V, pre[c]);
    if constexpr (Op::kNorm) {
      cuda::add_squares<G>(pk[0], lane, n, ss[0]);
      cuda::add_squares<G>(pk[1], lane, n, ss[1]);
    }
  }
  float r[2] = {1.f, 1.f};
  if constexpr (Op::kNorm) {
    cuda::group_sum<G, 2>(ss, scratch);
    if constexpr (Lean) {
      constexpr float inv_n = 1.f / (G * CH * V);
      r[0] = rsqrtf(ss[0] * inv_n + eps);
      r[1] = rsqrtf(ss[1] * inv_n + eps);
    } else {
      r[0] = rsqrtf(ss[0] / static_cast<float>(n) + eps);
      r[1] = rsqrtf(ss[1] / static_cast<float>(n) + eps);
    }
  } else {
    __syncwarp();  // keeps every load issued before the first store (see row_norm_fast_kernel)
  }
  if (!active) return;
  if constexpr (Op::kNorm) {
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int c = 0; c < CH; ++c) cuda::keep_packed(pk[j][c].u);
  }
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    const int idx = (c * G + lane) * V;
    if (idx >= n) continue;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      float v[V];
      cuda::unpack16<T>(pk[j][c].u, v);
      if constexpr (TWeight) rows[j].template store_t_weight<V>(idx, v, r[j], pre[c]);
      else rows[j].template store<V>(idx, v, r[j], pre[c]);
    }
  }
}

// `tokens` rows of q (and of k). TWeight requires both weights in T. Lean sets op.t.seq_div, and
// falls back to the plain kernel where tokens or seq reach 2^31 or n is not G x CH chunks.
template <int G, int CH, int MinBlocks, bool TWeight, typename Op, bool L1Keep = false, bool Lean = false>
cudaError_t launch_rope_token(const Op& op, int64_t tokens, int n, float eps, cudaStream_t stream) {
  if constexpr (Lean) {
    constexpr int kN = G * CH * (16 / static_cast<int>(sizeof(typename Op::T)));
    if (n == kN && tokens < (int64_t{1} << 31) && op.t.seq < (int64_t{1} << 31)) {
      Op lean = op;
      lean.t.seq_div = make_fast_div(static_cast<uint32_t>(op.t.seq));
      return cuda::launch_groups<G>(rope_token_kernel<Op, G, CH, MinBlocks, TWeight, L1Keep, true>, tokens, stream,
                                    lean, tokens, n, eps);
    }
  }
  return cuda::launch_groups<G>(rope_token_kernel<Op, G, CH, MinBlocks, TWeight, L1Keep>, tokens, stream, op, tokens,
                                n, eps);
}

}  // namespace khub_kernels::rope3d
