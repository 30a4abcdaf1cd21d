// Instantiates the RMSNorm row op for fp32, fp16 and bf16.
#include "rmsnorm.cuh"
#include "rmsnorm_launch.h"

namespace khub_kernels::rmsnorm {
namespace {

// The two-pass kernel where it was measured faster on the H200 (docs/gpu-measurements.md, version
// 16), no residual, a T weight and at least 2048 rows: 16-bit rows of 4096 ([1,2048,4096] 13.1 /
// 9.1 -> 12.8 / 8.0 us cold / graph, [1,8192,4096] 37.9 -> 37.5) and of 2048 up to 32 MiB
// ([2,2688,2048] 15.3 / 12.2 -> 15.0 / 11.1; past that equal or up to 0.4 us slower), and fp32
// rows of 3072 ([4,4096,3072] 100.3 -> 98.8). Returns false where it does not apply.
constexpr int64_t kReloadMinRows = 2048;
constexpr double kReloadMaxBytes2048 = 32.0 * (1 << 20);

template <typename T>
bool run_reload(const RmsNormArgs& a, bool vector_ok, cudaStream_t stream, cudaError_t& err) {
  const int64_t rows = a.x_layout.rows;
  if (!vector_ok || a.residual || !a.weight || a.weight_dtype != a.dtype || rows < kReloadMinRows) return false;
  if (sizeof(T) == 2 && a.n == 2048 && static_cast<double>(rows) * a.n * sizeof(T) > kReloadMaxBytes2048) return false;
  // Diffusers rounds x * r to the weight dtype, here T: the same as Qwen3.
  const bool round_first = a.rounding != Rounding::Fused;
  const auto* x = static_cast<const T*>(a.x);
  const auto* w = static_cast<const T*>(a.weight);
  auto* out = static_cast<T*>(a.out);
  const int n = static_cast<int>(a.n);
  if constexpr (sizeof(T) == 2) {
    if (a.n == 2048) err = launch_reload<T, 128, 2, 16>(x, a.x_layout, w, out, n, a.eps, round_first, stream);
    else if (a.n == 4096) err = launch_reload<T, 256, 2, 8>(x, a.x_layout, w, out, n, a.eps, round_first, stream);
    else return false;
  } else {
    if (a.n != 3072) return false;
    err = launch_reload<T, 256, 3, 6, true>(x, a.x_layout, w, out, n, a.eps, round_first, stream);
  }
  return true;
}

template <typename T>
cudaError_t run(const RmsNormArgs& a, bool vector_ok, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  if (run_reload<T>(a, vector_ok, stream, err)) return err;
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
