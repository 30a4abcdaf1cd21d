// Instantiates the RoPE kernels for fp32, fp16 and bf16.
#include <algorithm>

#include "rope3d.cuh"
#include "rope3d_launch.h"

namespace khub_kernels::rope3d {
namespace {

template <typename T, int V>
cudaError_t launch_plain(const RopeArgs& a, cudaStream_t stream) {
  const int64_t nvec = a.d / V;
  const int threads = static_cast<int>(std::min<int64_t>(128, (nvec + 31) / 32 * 32));
  const int64_t tiles = (nvec + threads - 1) / threads;
  const int64_t rows = a.q_layout.rows;
  if (rows > 0x7fffffffLL || tiles > 65535) return cudaErrorInvalidConfiguration;
  rope_kernel<T, V><<<dim3(static_cast<unsigned>(rows), static_cast<unsigned>(tiles)), threads, 0, stream>>>(
      static_cast<const T*>(a.q), a.q_layout, static_cast<const T*>(a.k), a.k_layout, static_cast<T*>(a.q_out),
      static_cast<T*>(a.k_out), a.d, a.trig);
  return cudaGetLastError();
}

template <typename T>
cudaError_t run(const RopeArgs& a, bool vector_ok, cudaStream_t stream) {
  if (!a.norm) return vector_ok ? launch_plain<T, 16 / sizeof(T)>(a, stream) : launch_plain<T, 2>(a, stream);
  const RopeNormOp<T> op{static_cast<const T*>(a.q), a.q_layout, static_cast<const T*>(a.k), a.k_layout,
                         static_cast<T*>(a.q_out), static_cast<T*>(a.k_out), a.q_weight, a.k_weight,
                         a.weight_dtype == DType::F32 && a.dtype != DType::F32, a.q_layout.rows, a.d, a.trig};
  const int64_t rows = a.q_layout.rows * (a.k ? 2 : 1);
  return cuda::launch_row_norm(op, rows, a.d, a.eps, vector_ok, stream);
}

}  // namespace

cudaError_t launch_rope3d(const RopeArgs& a, bool vector_ok, cudaStream_t stream) {
  if (a.q_layout.rows == 0 || a.d == 0) return cudaSuccess;
  switch (a.dtype) {
    case DType::F32: return run<float>(a, vector_ok, stream);
    case DType::F16: return run<__half>(a, vector_ok, stream);
    case DType::BF16: return run<__nv_bfloat16>(a, vector_ok, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace khub_kernels::rope3d
