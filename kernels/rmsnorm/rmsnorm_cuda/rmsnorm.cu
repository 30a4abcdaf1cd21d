// Instantiates the RMSNorm row op for fp32, fp16 and bf16.
#include "rmsnorm.cuh"
#include "rmsnorm_launch.h"

namespace khub_kernels::rmsnorm {
namespace {

// The dedicated kernels (rmsnorm.cuh) where they were measured faster than the row engine on the
// H200: no residual, a T weight, at least 2048 rows
// (any number of 16-bit rows of 2048 or 4096), and the row sizes measured. The one-pass keep
// kernel, except fp32 rows of 3072, which take the two-pass kernel with L1 / L2 eviction priorities
// ([4,4096,3072] graph 96.3 -> 95.7 us, cold unchanged in kernels_bench). 16-bit rows of 2048
// between 16 and 32 MiB read x into L1 (evict_last): in graph replay the input comes from L2, and
// reads that allocate in L1 serve it faster ([2,2688,2048] 13.98 / 9.69 us cold / graph, against
// the two-pass kernel's 14.2-14.4 / 9.8 and the keep kernel bypassing L1's 14.0-14.3 / 11.5).
// Returns false where none applies.
constexpr int64_t kDedicatedMinRows = 2048;
constexpr double kMiB = 1 << 20;

// 16-bit decode rows of 8192 (up to kDecodeRows rows, one wave) on the keep kernel at
// kDecodeGroup8192 threads a row, 2 chunks each, the weight loaded with the row; the fused add too.
// Probe on the H200 (bf16, cold / graph us, bench/peers' method), [1,8192]: the row engine's 256 x 4
// 5.18 / 2.55, keep 256 x 4 2.38 (graph), 1024 x 1 4.61 / 1.86, 512 x 2 4.19 / 1.59; [256,8192] 7.52 /
// 3.53, 6.91 / 3.23, 6.53 / 2.83. Fused add [1,8192]: engine 5.76 / 2.95, 1024 x 1 4.99 / 2.20,
// 512 x 2 4.64 / 1.98; [256,8192] 9.25 / 4.68, 8.58 / 4.43, 8.29 / 3.80. More rows: not measured.
constexpr int64_t kDecodeRows = 256;
constexpr int kDecodeGroup8192 = 512;

// The keep kernel loading the weight with the row, before the reduction (WeightFirst), so no
// memory round trip follows the reduction: cold 0.2-0.4 us and graph 0.1-0.3 us lower at every
// configuration below but the few-rows one, where it changed nothing ([2,2688,2048] 14.02-14.08 /
// 9.77 -> 13.70-13.79 / 9.51-9.55, [1,2048,4096] 11.87-12.00 / 7.54 -> 11.65-11.81 / 7.45,
// [4,4096,3072] 52.35-52.45 -> 51.97-52.00).
template <typename T, int G, int CH, int MinBlocks, bool L1Keep = false>
cudaError_t keep_wf(const T* x, const RowLayout& xl, const T* w, T* out, int n, float eps, bool round_first,
                    cudaStream_t stream) {
  return launch_keep<T, G, CH, MinBlocks, L1Keep, true>(x, xl, w, out, n, eps, round_first, stream);
}

// The fused add, a T weight. Rows of 2048 (fp32: at least 2048 of them) on the keep kernel, weight loaded
// first: [2,2688,2048] against the row engine, probe cold / graph us: bf16 26.14-26.40 / 23.30 ->
// 25.60-25.89 / 22.81-22.86 (128 x 2, 1536 threads/SM);
// fp32 47.97-48.13 / 45.13-45.21 -> 46.53-46.94 / 43.87-43.89 (512 x 1, 2048 threads/SM; 256 x 2,
// the engine's layout, 47.14-47.33 / 44.31-44.45).
// 16-bit rows of 4096 (Qwen3's hidden size), probe, two processes, each candidate twice in turn:
// from 2048 rows the two-pass kernel recomputing the sum from x and the residual
// re-read with L1 / L2 priorities, as inductor schedules it: [1,8192,4096] at 512 x 1 67.2-67.8 /
// 64.0-64.1 against the engine's 69.2-70.8 / 65.4-67.5 (copy16 66.6; torch.compile 67.23 in
// baselines.py), [1,4096,4096] 36.2-36.9 / 33.4 against 37.1-37.6 / 33.4-34.9; [1,2048,4096] at
// 256 x 2 19.7-20.3 / 17.5 against 20.9-21.1 / 17.2-18.8 and the keep kernel's 20.3-20.4 / 17.0
// (compile 20.42 / 18.60). Fewer rows on the keep kernel: [1,1024,4096] 12.6-12.7 / 8.2-10.0 ->
// 11.2-11.3 / 7.2, [64,1,4096] 5.9-6.0 / 2.1 -> 5.1 / 1.6 (compile 5.31 / 2.13). The op always
// rounds once (Rounding::Fused); the rounding-first instance of the fp16 256 x 2 two-pass kernel,
// reachable only from C++, spills 4 bytes (ptxas).
// fp32 rows of 4096 (probe, each candidate twice in turn): from 4096 rows the two-pass
// kernel at 1024 x 1, [1,8192,4096] 134.2-136.2 / 130.4-132.6 -> 130.05-130.18 / 126.9 (copy16
// 128.6; the keep kernel 133.3); from 2048 rows the keep kernel at 512 x 2, [1,2048,4096]
// 37.2-37.3 / 33.8-35.8 -> 36.6-36.7 / 32.9 (the two-pass kernel 37.1-37.4). Fewer 16-bit rows of
// 2048 on the keep kernel too: [1,1024,2048] 8.48-8.51 / 4.62-4.75 -> 7.94-8.00 /
// 3.86-3.88, [2,128,2048] 6.30-6.37 / 2.36 -> 5.82-5.89 / 1.85 (the two-pass kernel 6.0-6.2).
template <typename T>
bool run_add_dedicated(const RmsNormArgs& a, bool vector_ok, cudaStream_t stream, cudaError_t& err) {
  if (!vector_ok || !a.weight || a.weight_dtype != a.dtype) return false;
  const int64_t rows = a.x_layout.rows;
  using RR = RowRead;
  if constexpr (sizeof(T) == 2) {
    if (a.n == 8192 && rows <= kDecodeRows) {
      err = launch_add_keep<T, kDecodeGroup8192, 8192 / 8 / kDecodeGroup8192, 2048 / kDecodeGroup8192>(a, stream);
      return true;
    }
    if (a.n == 4096) {
      if (rows >= 2 * kDedicatedMinRows) err = launch_add_reload<T, 512, 1, 4, RR::L1KeepL2Hint, true, true>(a, stream);
      else if (rows >= kDedicatedMinRows) err = launch_add_reload<T, 256, 2, 8, RR::L1KeepL2Hint, true, true>(a, stream);
      else err = launch_add_keep<T, 256, 2, 8>(a, stream);
      return true;
    }
    if (a.n != 2048) return false;
    // Up to 256 rows with plain stores: [2,128,2048] probe 5.89-5.92 / 1.84 -> 5.63 / 2.00,
    // kernels_bench 5.60-5.70 / 1.81 -> 5.31-5.44 / 1.78 (torch.compile 5.31 / 2.86 in
    // baselines.py); at 1024 rows they cost graph replay 3.9 -> 5.8 us in the probe.
    err = rows <= 2 * cuda::kFewRows ? launch_add_keep<T, 128, 2, 12, true, false>(a, stream)
                                     : launch_add_keep<T, 128, 2, 12>(a, stream);
    return true;
  } else {
    if (rows < kDedicatedMinRows) return false;
    if (a.n == 4096) {
      if (rows >= 2 * kDedicatedMinRows) err = launch_add_reload<T, 1024, 1, 2, RR::L1KeepL2Hint, true, true>(a, stream);
      else err = launch_add_keep<T, 512, 2, 4>(a, stream);
      return true;
    }
    if (a.n != 2048) return false;
    err = launch_add_keep<T, 512, 1, 4>(a, stream);
    return true;
  }
}

template <typename T>
bool run_dedicated(const RmsNormArgs& a, bool vector_ok, cudaStream_t stream, cudaError_t& err) {
  const int64_t rows = a.x_layout.rows;
  if (a.residual) return run_add_dedicated<T>(a, vector_ok, stream, err);
  if (!vector_ok || !a.weight || a.weight_dtype != a.dtype) return false;
  const double bytes = static_cast<double>(rows) * a.n * sizeof(T);
  // Diffusers rounds x * r to the weight dtype, here T: the same as Qwen3.
  const bool rf = a.rounding != Rounding::Fused;
  const auto* x = static_cast<const T*>(a.x);
  const auto* w = static_cast<const T*>(a.weight);
  auto* out = static_cast<T*>(a.out);
  const int n = static_cast<int>(a.n);
  const RowLayout& xl = a.x_layout;
  if constexpr (sizeof(T) == 2) {
    // Fewer rows of 2048 or 4096 take the keep kernel too, measured against the row engine on the
    // H200: up to 128 rows of 4096 (decode) at 512 threads a row,
    // one chunk each ([64,1,4096] 5.25 / 1.70 -> 4.99 / 1.46 us), more at 256 x 2 ([1,1024,4096]
    // 9.31 / 5.06 -> 8.22 / 4.01); rows of 2048 at 128 x 2, 1536 threads/SM ([1,1024,2048] 6.69 /
    // 2.97 -> 6.40 / 2.77, [2,128,2048] 5.70 / 2.03 -> 5.38 / 1.62).
    if (a.n == 4096 && rows <= cuda::kFewRows) {
      err = launch_keep<T, 512, 1, 4>(x, xl, w, out, n, a.eps, rf, stream);
      return true;
    }
    if (a.n == 8192 && rows <= kDecodeRows) {
      err = keep_wf<T, kDecodeGroup8192, 8192 / 8 / kDecodeGroup8192, 2048 / kDecodeGroup8192>(x, xl, w, out, n,
                                                                                             a.eps, rf, stream);
      return true;
    }
    // q/k heads of 128, any number: 16 threads x 1 chunk ([1,8192,32,128] 36.35 -> 35.97 us against
    // 8 x 2). Fewer than 2048 heads took the engine's 8 x 2 before: probe, 32 heads, cold / graph
    // 4.22 / 1.62 us -> keep 16 x 1 3.74 / 1.17, weight loaded first 3.71 / 1.06 (512 heads 4.58 /
    // 1.72 -> 4.19 / 1.14).
    if (a.n == 128) {
      err = keep_wf<T, 16, 1, 8>(x, xl, w, out, n, a.eps, rf, stream);
      return true;
    }
    if (rows < kDedicatedMinRows && (a.n == 2048 || a.n == 4096)) {
      err = a.n == 2048 ? keep_wf<T, 128, 2, 12>(x, xl, w, out, n, a.eps, rf, stream)
                        : keep_wf<T, 256, 2, 8>(x, xl, w, out, n, a.eps, rf, stream);
      return true;
    }
  }
  if (rows < kDedicatedMinRows) return false;
  if constexpr (sizeof(T) == 2) {
    switch (a.n) {
      case 2048:
        if (bytes <= 16 * kMiB) err = keep_wf<T, 128, 2, 16>(x, xl, w, out, n, a.eps, rf, stream);
        else if (bytes <= 32 * kMiB) err = keep_wf<T, 128, 2, 16, true>(x, xl, w, out, n, a.eps, rf, stream);
        else err = keep_wf<T, 128, 2, 12>(x, xl, w, out, n, a.eps, rf, stream);
        return true;
      case 3072: err = keep_wf<T, 128, 3, 8>(x, xl, w, out, n, a.eps, rf, stream); return true;
      case 4096:
        // Bypassing L1 at 16 MiB too: reading x into L1 there took graph replay 7.6 -> 6.8 us but
        // kernels_bench's cold time up 0.2-0.8 us ([1,2048,4096] 12.13 -> 12.29-12.35, [8,256,4096]
        // 12.06 -> 12.83-12.86), though the probe had read it 0.1-0.25 lower.
        err = bytes <= 32 * kMiB ? keep_wf<T, 256, 2, 8>(x, xl, w, out, n, a.eps, rf, stream)
                                 : keep_wf<T, 256, 2, 6>(x, xl, w, out, n, a.eps, rf, stream);
        return true;
      default: return false;
    }
  } else {
    switch (a.n) {
      case 128: err = keep_wf<T, 16, 2, 6>(x, xl, w, out, n, a.eps, rf, stream); return true;
      // fp32 rows of 2048 at 2048 threads/SM (30 registers, no spills): [2,2688,2048] in
      // kernels_bench, alternating with 1536 threads/SM, cold / graph 25.98-26.05 / 23.08 ->
      // 25.66-25.89 / 22.87 us.
      case 2048: err = keep_wf<T, 256, 2, 8>(x, xl, w, out, n, a.eps, rf, stream); return true;
      case 3072: err = launch_reload<T, 256, 3, 6, RowRead::L1KeepL2Hint>(x, xl, w, out, n, a.eps, rf, stream); return true;
      default: return false;
    }
  }
}

template <typename T>
cudaError_t run(const RmsNormArgs& a, bool vector_ok, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  if (run_dedicated<T>(a, vector_ok, stream, err)) return err;
  const RmsNormOp<T> op{static_cast<const T*>(a.x), a.x_layout, static_cast<const T*>(a.residual),
                        a.residual_layout, a.weight, a.weight_dtype == DType::F32 && a.dtype != DType::F32,
                        static_cast<T*>(a.out), static_cast<T*>(a.residual_out), a.n, a.rounding};
  return cuda::launch_row_norm(op, a.x_layout.rows, a.n, a.eps, vector_ok, stream);
}

}  // namespace

cudaError_t launch_rms_norm(const RmsNormArgs& a, bool vector_ok, cudaStream_t stream) {
  return cuda::dispatch_storage(a.dtype, [&](auto t) { return run<typename decltype(t)::type>(a, vector_ok, stream); });
}

}  // namespace khub_kernels::rmsnorm
