// GEGLU / GELU device code: one thread per V output elements, block (row, column tile). No torch.
#pragma once
#include "geglu.h"
#include "khub_kernels/cuda_numeric.cuh"

namespace khub_kernels::geglu {

template <Act A>
__device__ __forceinline__ float gelu(float g) {
  if constexpr (A == Act::GeluErf) {
    return 0.5f * g * (1.f + erff(g * 0.70710678118654752f));
  } else {
    const float inner = 0.79788456080286536f * (g + 0.044715f * g * g * g);
    return 0.5f * g * (1.f + tanhf(inner));
  }
}

template <typename T, int V, Act A, bool Gated>
__global__ void __launch_bounds__(128) geglu_kernel(const T* __restrict__ x, RowLayout xl, T* __restrict__ out,
                                                    int64_t n) {
  const int64_t row = blockIdx.x;
  const int64_t col = (static_cast<int64_t>(blockIdx.y) * blockDim.x + threadIdx.x) * V;
  if (col >= n) return;
  const T* xr = x + cuda::row_offset(xl, row);
  float y[V];
  cuda::load_vec<T, V>(xr + col, y);
  if constexpr (Gated) {
    float g[V];
    cuda::load_vec<T, V>(xr + n + col, g);
#pragma unroll
    for (int i = 0; i < V; ++i) y[i] *= gelu<A>(g[i]);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) y[i] = gelu<A>(y[i]);
  }
  cuda::store_vec<T, V>(out + row * n + col, y);
}

}  // namespace khub_kernels::geglu
