// Gated GELU with the operand tiles fetched by the copy engine (khub_kernels/bulk_copy.cuh): a
// block of 128 threads covers K rows x C columns, one thread asks for the 2K pieces (x and gate
// of each row), and every thread then computes U vectors from shared memory. No torch.
#pragma once
#include "geglu.cuh"
#include "khub_kernels/bulk_copy.cuh"

namespace khub_kernels::geglu {

constexpr int kBulkThreads = 128;

// Columns (elements) of a block's tile: K rows share the block's U vectors a thread.
template <typename T, int K, int U>
constexpr int bulk_cols() {
  return kBulkThreads * U * (16 / static_cast<int>(sizeof(T))) / K;
}

// Grid (column tiles, row blocks). Needs 16-byte aligned rows and n % (16 / sizeof(T)) == 0.
template <typename T, Act A, int K, int U>
__global__ void __launch_bounds__(kBulkThreads) geglu_bulk_kernel(const T* __restrict__ x, RowLayout xl,
                                                                  T* __restrict__ out, int64_t n) {
  constexpr int V = 16 / sizeof(T), C = bulk_cols<T, K, U>(), CV = C / V;
  __shared__ __align__(128) uint4 xs[K][CV], gs[K][CV];
  __shared__ __align__(8) uint64_t bar;
  cuda::wait_for_previous_grid();
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * C, r0 = static_cast<int64_t>(blockIdx.y) * K;
  const int width = static_cast<int>(n - c0 < C ? n - c0 : C);
  const int krows = static_cast<int>(xl.rows - r0 < K ? xl.rows - r0 : K);
  if (threadIdx.x == 0) {
    const unsigned piece = static_cast<unsigned>(width) * sizeof(T);
    cuda::bulk_begin(&bar, 2u * krows * piece);
    for (int k = 0; k < krows; ++k) {
      const T* xr = x + cuda::row_offset(xl, r0 + k) + c0;
      cuda::bulk_load(xs[k], xr, piece, &bar);
      cuda::bulk_load(gs[k], xr + n, piece, &bar);
    }
  }
  __syncthreads();
  cuda::bulk_wait(&bar);
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const int v = u * kBulkThreads + threadIdx.x, k = v / CV, cv = v % CV;
    if (k >= krows || cv * V >= width) continue;
    float h[V], g[V];
    cuda::unpack16<T>(xs[k][cv], h);
    cuda::unpack16<T>(gs[k][cv], g);
#pragma unroll
    for (int i = 0; i < V; ++i) h[i] *= gelu<A>(g[i]);
    cuda::store_vec<T, V, true>(out + (r0 + k) * n + c0 + cv * V, h);
  }
}

template <typename T, Act A, int K, int U>
cudaError_t launch_bulk(const GegluArgs& a, cudaStream_t stream) {
  constexpr int C = bulk_cols<T, K, U>();
  const int64_t tiles = (a.n + C - 1) / C, blocks = (a.x_layout.rows + K - 1) / K;
  if (!a.gated || a.n % (16 / sizeof(T)) != 0 || tiles > 0x7fffffffLL || blocks > 65535) return cudaErrorInvalidValue;
  return cuda::launch(geglu_bulk_kernel<T, A, K, U>, dim3(unsigned(tiles), unsigned(blocks)), dim3(kBulkThreads),
                      stream, static_cast<const T*>(a.x), a.x_layout, static_cast<T*>(a.out), a.n);
}

}  // namespace khub_kernels::geglu
