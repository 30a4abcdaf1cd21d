// The row engine behind RMSNorm, AdaLN and the fused q/k-norm + RoPE: each row of n elements is
// loaded once into registers, reduced in fp32 (sum of squares), then transformed and stored.
//
// An Op supplies the per-row work:
//   using T;                                       storage type
//   static constexpr bool kNorm;                   false: no reduction, r = 1
//   static constexpr int kMinVec;                  1, or 2 when the store needs element pairs
//   static constexpr int kWideThreads;             0, or threads per SM of the wide groups: see wide_group()
//   static constexpr int kEarlyChunks;              see default_fetch()
//   struct Row { const T* x;                                                     // row start
//                template <int V, bool Side> void load(int idx, float (&v)[V]);   // pre-norm values
//                template <int CH, int G> void combine(Pack16<T> (&pk)[CH], int lane, int n);
//                template <int V> struct Pre;                                     // store's operands
//                template <int V> void fetch(int idx, Pre<V>& p);
//                template <int V> void store(int idx, const float (&v)[V], float r, const Pre<V>& p); };
//   Row row(int64_t r) const;
// load() returns values exactly representable in T; with Side it also writes side outputs (new
// residuals); the element path uses it. The 16-byte path loads x itself and calls combine() to
// fold in the other inputs chunk-wise (same rounding as load()). fetch() loads what store() needs
// besides the row (weight, modulation, trig) into registers; when the 16-byte path issues it is a
// template choice (Fetch, below). idx is a multiple of V.
#pragma once
#include <algorithm>

#include "khub_kernels/cuda_numeric.cuh"
#include "khub_kernels/launch.cuh"

namespace khub_kernels::cuda {

constexpr int kRowBlock = 128;  // threads per block when a group is one warp or less

// 16 bytes of T, as loaded and stored by the fast path.
template <typename T>
union Pack16 {
  uint4 u;
  T t[16 / sizeof(T)];
};

// For an op's combine(): folds a second input into the packed row chunk-wise. Loads side's chunks
// first (all in flight together), then for each chunk sets a = f(idx, a, b) in fp32 (a: the row,
// b: side), rounds it to T into the row and writes it to side_out (the new residual stream).
template <int CH, int G, typename T, typename F>
__device__ __forceinline__ void fold_side_input(Pack16<T> (&pk)[CH], int lane, int n, const T* side, T* side_out,
                                                F f) {
  constexpr int V = 16 / sizeof(T);
  Pack16<T> sp[CH];
#pragma unroll
  for (int c = 0; c < CH; ++c)
    if ((c * G + lane) * V < n) sp[c].u = ldg_stream(side + (c * G + lane) * V);
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    const int idx = (c * G + lane) * V;
    if (idx >= n) continue;
    float a[V], b[V];
    unpack16<T>(pk[c].u, a);
    unpack16<T>(sp[c].u, b);
    f(idx, a, b);
#pragma unroll
    for (int i = 0; i < V; ++i) pk[c].t[i] = from_float<T>(a[i]);
    st_out<true>(side_out + idx, pk[c].u);
  }
}

// Fast path: G threads own a row; each holds CH chunks of V contiguous elements (16 bytes), kept
// packed in storage precision between the two phases (the loaded values are exact in T), so a
// thread needs 4 registers per chunk and enough rows stay in flight per SM.
template <int G>
constexpr int row_threads() {
  return G > 32 ? G : kRowBlock;
}

// This thread's place in a launch_groups grid: its lane in its G-thread group, the group's row, and
// whether that row exists (the last block's groups may run past the rows).
struct GroupRow {
  int lane;
  int64_t row;
  bool active;
};

template <int G>
__device__ __forceinline__ GroupRow group_row(int64_t rows) {
  constexpr int RPB = row_threads<G>() / G;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * RPB + threadIdx.x / G;
  return {static_cast<int>(threadIdx.x % G), row, row < rows};
}

// Launches kernel with one G-thread group per row (or token), row_threads<G>() threads a block.
template <int G, typename... Params, typename... Args>
cudaError_t launch_groups(void (*kernel)(Params...), int64_t rows, cudaStream_t stream, Args&&... args) {
  constexpr int per_block = row_threads<G>() / G;
  const int64_t blocks = (rows + per_block - 1) / per_block;
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  return launch(kernel, dim3(static_cast<unsigned>(blocks)), dim3(row_threads<G>()), stream,
                std::forward<Args>(args)...);
}

// Adds the squares of the row chunks a thread of a G-thread group holds (chunks past n skipped) to
// ss, in chunk then element order.
template <int G, int CH, typename T>
__device__ __forceinline__ void add_squares(const Pack16<T> (&pk)[CH], int lane, int n, float& ss) {
  constexpr int V = 16 / sizeof(T);
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    if ((c * G + lane) * V >= n) continue;
    float f[V];
    unpack16<T>(pk[c].u, f);
#pragma unroll
    for (int i = 0; i < V; ++i) ss += f[i] * f[i];
  }
}

// When fetch() runs for a chunk. AtStore: just before that chunk's store. Early: for every chunk
// before the reduction (its loads overlap the row's). Op::kEarlyChunks is the most chunks for which
// Early paid on the H200: the fused norm + RoPE gained 1.3 us (of 39); RMSNorm, AdaLN and plain
// RoPE lost 1-4 us, their prefetched registers crowding the row or spilling. Fetching every chunk's
// operands between the reduction and the first store lost too (AdaLN 38.5 -> 41.8 us).
enum class Fetch { AtStore, Early };

template <typename Op, int CH>
constexpr Fetch default_fetch() {
  return CH <= Op::kEarlyChunks ? Fetch::Early : Fetch::AtStore;
}

template <typename Op, int G, int CH, int MinBlocks = 768 / row_threads<G>(), Fetch F = default_fetch<Op, CH>()>
__global__ void __launch_bounds__(row_threads<G>(), MinBlocks)
    row_norm_fast_kernel(const Op op, int64_t rows, int n, float eps) {
  using T = typename Op::T;
  constexpr int V = 16 / sizeof(T);
  constexpr int RPB = row_threads<G>() / G;
  using Pre = typename Op::Row::template Pre<V>;
  wait_for_previous_grid();
  __shared__ float scratch[G > 32 ? G / 32 : 1];
  const int lane = threadIdx.x % G;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * RPB + threadIdx.x / G;
  const bool active = row < rows;
  Pack16<T> pk[CH];
  Pre pre[F == Fetch::AtStore ? 1 : CH];
  float ss = 0.f;
  typename Op::Row rc{};
  if (active) {
    rc = op.row(row);
    // All of the row's x loads are issued before any use; then the op combines other inputs
    // (residual, gated delta), again loading every chunk first.
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      const int idx = (c * G + lane) * V;
      if (idx < n) pk[c].u = ldg_stream(rc.x + idx);
    }
    rc.template combine<CH, G>(pk, lane, n);
    if constexpr (F == Fetch::Early) {
#pragma unroll
      for (int c = 0; c < CH; ++c)
        if ((c * G + lane) * V < n) rc.template fetch<V>((c * G + lane) * V, pre[c]);
    }
    add_squares<G>(pk, lane, n, ss);
  }
  float r = 1.f;
  if constexpr (Op::kNorm) {
    ss = group_sum<G>(ss, scratch);
    r = rsqrtf(ss / static_cast<float>(n) + eps);
  } else {
    // Nothing reads the row before the stores, and ptxas would sink each chunk's load down to its
    // store, one DRAM round trip after another; a warp barrier keeps every load issued up front.
    __syncwarp();
  }
  if (active) {
#pragma unroll
    for (int c = 0; c < CH; ++c) keep_packed(pk[c].u);
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      const int idx = (c * G + lane) * V;
      if (idx < n) {
        float v[V];
        unpack16<T>(pk[c].u, v);
        if constexpr (F == Fetch::AtStore) rc.template fetch<V>(idx, pre[0]);
        rc.template store<V>(idx, v, r, pre[F == Fetch::AtStore ? 0 : c]);
      }
    }
  }
}

// Any n, any alignment: one block per row (grid-strided), element accesses, two passes over the
// row (the second recomputes the loaded values, so side outputs are written once, in pass one).
template <typename Op, int V>
__global__ void __launch_bounds__(256) row_norm_generic_kernel(const Op op, int64_t rows, int n, float eps) {
  wait_for_previous_grid();
  __shared__ float scratch[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    auto rc = op.row(row);
    float r = 1.f;
    if constexpr (Op::kNorm) {
      float ss = 0.f;
      for (int idx = threadIdx.x * V; idx < n; idx += blockDim.x * V) {
        float v[V];
        rc.template load<V, true>(idx, v);
#pragma unroll
        for (int i = 0; i < V; ++i) ss += v[i] * v[i];
      }
      ss = block_sum(ss, scratch);
      r = rsqrtf(ss / static_cast<float>(n) + eps);
    }
    for (int idx = threadIdx.x * V; idx < n; idx += blockDim.x * V) {
      float v[V];
      typename Op::Row::template Pre<V> pre;
      rc.template fetch<V>(idx, pre);
      rc.template load<V, !Op::kNorm>(idx, v);
      rc.template store<V>(idx, v, r, pre);
    }
  }
}

// Group size and chunks for a row of n elements with V-element vectors: at most 4 chunks a thread
// (8 only past 256 * 4 vectors), so the packed row stays within the 80-register budget of
// __launch_bounds__ (>= 24 warps per SM); rows of up to 64 vectors use 8 or 16
// threads with 2 or 4 chunks.
struct RowConfig {
  int group = 0;   // 0: use the generic kernel
  int chunks = 0;
};

inline RowConfig choose_row_config(int64_t n, int vec) {
  // Rows of up to 16 vectors (q/k heads of 128 in bf16) take two chunks a thread: more loads in
  // flight per thread ([1,8192,32,128] 38.4 -> 36.9 us against 16 threads x 1 chunk).
  if (n <= 16LL * vec) return {8, 2};
  if (n <= 32LL * vec) return {16, 2};
  if (n <= 64LL * vec) return {16, 4};
  for (int g = 32; g <= 256; g *= 2)
    if (static_cast<int64_t>(g) * vec * 4 >= n) return {g, 4};
  if (256LL * vec * 8 >= n) return {256, 8};
  return {0, 0};
}

template <typename Op, int G, int CH, int MinBlocks = 768 / row_threads<G>(), Fetch F = default_fetch<Op, CH>()>
cudaError_t launch_fast(const Op& op, int64_t rows, int n, float eps, cudaStream_t stream) {
  return launch_groups<G>(row_norm_fast_kernel<Op, G, CH, MinBlocks, F>, rows, stream, op, rows, n, eps);
}

// Wide groups: rows of 2048 or 4096 (bf16) spread over 128 or 256 threads, two 16-byte chunks
// each, Op::kWideThreads threads per SM. On the H200, RMSNorm (1536) ran 1-3 % faster in the
// probe; the plain RoPE (1024, registers for its trig) 7-8 % faster once its kernels were
// specialised per trig mode; 16-bit plain AdaLN (1536) 0.2-0.8 us faster once rows were unpacked
// by words; the fused norm + RoPE runs its own kernel.
// Returns that group size for a row of n elements (0: not measured).
inline int wide_group(int64_t n, int vec) {
  for (int g = 128; g <= 256; g *= 2)
    if (static_cast<int64_t>(g) * vec * 2 == n) return g;
  return 0;
}

constexpr int64_t kFewRows = 128;

// Runs op over `rows` rows of n elements. `vector_ok`: every row start is 16-byte aligned and n is a
// multiple of the vector width (the caller checks pointers and strides).
template <typename Op>
cudaError_t launch_row_norm(const Op& op, int64_t rows, int64_t n, float eps, bool vector_ok,
                            cudaStream_t stream) {
  if (rows == 0 || n == 0) return cudaSuccess;
  constexpr int vec = 16 / sizeof(typename Op::T);
  const RowConfig cfg = vector_ok ? choose_row_config(n, vec) : RowConfig{};
  const int ni = static_cast<int>(n);
  if constexpr (Op::kWideThreads > 0) {
    // A few rows (one per SM or less): one chunk per thread, 512 threads a row, shortens each
    // row's dependent chain (graph [64,1,4096]: 2.05 -> 1.85 us; slower from 2048 rows on).
    if (vector_ok && rows <= kFewRows && n == 512 * vec) return launch_fast<Op, 512, 1, 4>(op, rows, ni, eps, stream);
    switch (vector_ok ? wide_group(n, vec) : 0) {
      case 128: return launch_fast<Op, 128, 2, Op::kWideThreads / 128>(op, rows, ni, eps, stream);
      case 256: return launch_fast<Op, 256, 2, Op::kWideThreads / 256>(op, rows, ni, eps, stream);
      default: break;
    }
  }
  switch (cfg.group * 16 + cfg.chunks) {
    case 8 * 16 + 2: return launch_fast<Op, 8, 2>(op, rows, ni, eps, stream);
    case 16 * 16 + 2: return launch_fast<Op, 16, 2>(op, rows, ni, eps, stream);
    case 16 * 16 + 4: return launch_fast<Op, 16, 4>(op, rows, ni, eps, stream);
    case 32 * 16 + 4: return launch_fast<Op, 32, 4>(op, rows, ni, eps, stream);
    case 64 * 16 + 4: return launch_fast<Op, 64, 4>(op, rows, ni, eps, stream);
    case 128 * 16 + 4: return launch_fast<Op, 128, 4>(op, rows, ni, eps, stream);
    case 256 * 16 + 4: return launch_fast<Op, 256, 4>(op, rows, ni, eps, stream);
    case 256 * 16 + 8: return launch_fast<Op, 256, 8>(op, rows, ni, eps, stream);
    default: break;
  }
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(rows, 132 * 16));
  return launch(row_norm_generic_kernel<Op, Op::kMinVec>, dim3(blocks), dim3(256), stream, op, rows, ni, eps);
}

}  // namespace khub_kernels::cuda
