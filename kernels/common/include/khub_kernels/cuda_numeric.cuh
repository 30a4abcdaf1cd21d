// Device-side helpers shared by the kernels: storage <-> fp32 conversion (round to nearest even),
// 16-byte vector loads and stores, and the group reductions the row kernels use. No torch.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "khub_kernels/types.h"

namespace khub_kernels::cuda {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// The 16 bytes u of T values as fp32, converted word by word (bf16: a shift and a mask per pair).
// Reading the elements through a union of T instead cost a byte permute per element, and nvcc
// then tracked the 16-bit halves one by one and kept the unpacked row alive, spilling.
template <typename T>
__device__ __forceinline__ void unpack16(const uint4& u, float (&f)[16 / sizeof(T)]) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      f[2 * k] = __uint_as_float(w[k] << 16);
      f[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
    } else if constexpr (std::is_same_v<T, __half>) {
      const float2 v = __half22float2(*reinterpret_cast<const __half2*>(&w[k]));
      f[2 * k] = v.x;
      f[2 * k + 1] = v.y;
    } else {
      static_assert(std::is_same_v<T, float>);
      f[k] = __uint_as_float(w[k]);
    }
  }
}

// An empty asm that claims to change u: values unpacked from it before this point cannot be
// reused after it, so a kernel keeps its row packed (4 registers a chunk) across a reduction and
// unpacks it again for the stores instead of keeping 8 fp32 registers a chunk alive.
__device__ __forceinline__ void keep_packed(uint4& u) {
  asm volatile("" : "+r"(u.x), "+r"(u.y), "+r"(u.z), "+r"(u.w));
}

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <typename T> __device__ __forceinline__ float round_to(float v) { return to_float(from_float<T>(v)); }

template <typename T>
struct StorageTag {
  using type = T;
};

// Calls f(StorageTag<T>{}) with T the CUDA storage type of d; the launchers' dtype switch.
template <typename F>
cudaError_t dispatch_storage(DType d, F&& f) {
  switch (d) {
    case DType::F32: return f(StorageTag<float>{});
    case DType::F16: return f(StorageTag<__half>{});
    case DType::BF16: return f(StorageTag<__nv_bfloat16>{});
  }
  return cudaErrorInvalidValue;
}

// The instructions of a row's read, bypassing L1 and allocating in it evict-last. A compile-time
// hook, so the probe can time other load paths (non-coherent or not, other L1 priorities) with
// every kernel unchanged otherwise (docs/gpu-testing.md); the shipped builds use these defaults.
#ifndef KHUB_LDG_STREAM
#define KHUB_LDG_STREAM "ld.global.nc.L1::no_allocate.v4.u32"
#endif
#ifndef KHUB_LDG_L1_LAST
#define KHUB_LDG_L1_LAST "ld.global.nc.L1::evict_last.v4.u32"
#endif

// 16-byte load of streamed data (read once): read-only path, no L1 allocation, so L1 keeps the
// vectors that are reused across rows (weights, modulation, RoPE tables).
__device__ __forceinline__ uint4 ldg_stream(const void* p) {
  uint4 v;
  asm volatile(KHUB_LDG_STREAM " {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// An L2 cache policy for a load's L2::cache_hint: EvictLast keeps the line for a second read (a
// row loaded again after its reduction), !EvictLast marks it as read for the last time.
template <bool EvictLast>
__device__ __forceinline__ uint64_t l2_policy() {
  uint64_t policy;
  if constexpr (EvictLast) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  else asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// ldg_stream with an L2 eviction priority (l2_policy).
template <bool EvictLast>
__device__ __forceinline__ uint4 ldg_stream_l2(const void* p) {
  const uint64_t policy = l2_policy<EvictLast>();
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(policy));
  return v;
}

// 16-byte load that allocates the line in L1 (read-only path) with an L1 eviction priority:
// EvictLast for a row read again soon by the same SM, so the second read (!EvictLast, the line's
// last use) can hit L1 instead of L2. L2Hint: the same priority in L2 too (as inductor's two-pass
// reductions mark their loads).
template <bool EvictLast, bool L2Hint>
__device__ __forceinline__ uint4 ldg_l1(const void* p) {
  uint4 v;
  if constexpr (L2Hint) {
    const uint64_t policy = l2_policy<EvictLast>();
    if constexpr (EvictLast) {
      asm volatile("ld.global.nc.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(p), "l"(policy));
    } else {
      asm volatile("ld.global.nc.L1::evict_first.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(p), "l"(policy));
    }
  } else if constexpr (EvictLast) {
    asm volatile(KHUB_LDG_L1_LAST " {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  } else {
    asm volatile("ld.global.nc.L1::evict_first.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  }
  return v;
}

// 16-byte read-only load, allocating in L1: the vectors reused across rows (weights, modulation).
__device__ __forceinline__ uint4 ldg16(const void* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }

// 16-byte read-only load (allocating in L1) issued where it stands: asm volatile keeps ptxas from
// sinking it past a barrier to its first use, so it overlaps the loads issued with it.
__device__ __forceinline__ uint4 ldg_now(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// A row's one 16-byte read: bypassing L1 (ldg_stream), or, KeepInL1, allocating in L1 with
// evict_last priority, which serves an input that comes from L2 faster (graph replay of
// [2,2688,2048] on the H200: RMSNorm 11.5 -> 9.7 us).
template <bool KeepInL1>
__device__ __forceinline__ uint4 ldg_row(const void* p) {
  if constexpr (KeepInL1) return ldg_l1<true, false>(p);
  else return ldg_stream(p);
}

// 16-byte store of an op's output, Stream: cache-streaming (st.global.cs: lines allocated
// evict-first), so the outputs of a large call don't push the inputs and the reused vectors out
// of L2. On the H200 this took RoPE [2,8064,2048] from 93.4 to 79.0 us and most row and
// elementwise kernels 1-5 % (and CUDA-graph replays up to 23 %) lower. The fused norm + RoPE ran
// 10 % slower with it on one group per row, 2-6 % faster on one group per token, so only its
// per-token kernel takes it.
template <bool Stream>
__device__ __forceinline__ void st_out(void* p, uint4 v) {
  if constexpr (Stream) __stcs(reinterpret_cast<uint4*>(p), v);
  else *reinterpret_cast<uint4*>(p) = v;
}

// Loads V elements starting at p[0] as fp32. V * sizeof(T) == 16 uses one 16-byte access (the
// caller guarantees alignment); any other V uses element accesses.
template <typename T, int V>
__device__ __forceinline__ void load_vec(const T* __restrict__ p, float (&out)[V]) {
  if constexpr (V * sizeof(T) == 16) {
    unpack16<T>(ldg16(p), out);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) out[i] = to_float(p[i]);
  }
}

template <typename T, int V, bool Stream = false>
__device__ __forceinline__ void store_vec(T* __restrict__ p, const float (&v)[V]) {
  if constexpr (V * sizeof(T) == 16) {
    union { uint4 u; T t[V]; } pk;
#pragma unroll
    for (int i = 0; i < V; ++i) pk.t[i] = from_float<T>(v[i]);
    st_out<Stream>(p, pk.u);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) p[i] = from_float<T>(v[i]);
  }
}

// a + b for 16 bytes of T each, rounded once to T: the same bits as adding in fp32 and rounding
// (the exact sum of two fp16 / bf16 values fits fp32 unless the smaller one is below half an ulp
// of the larger), in one packed instruction per pair.
template <typename T>
__device__ __forceinline__ uint4 add_rounded(uint4 a, uint4 b) {
  if constexpr (sizeof(T) == 4) {
    return make_uint4(__float_as_uint(__uint_as_float(a.x) + __uint_as_float(b.x)),
                      __float_as_uint(__uint_as_float(a.y) + __uint_as_float(b.y)),
                      __float_as_uint(__uint_as_float(a.z) + __uint_as_float(b.z)),
                      __float_as_uint(__uint_as_float(a.w) + __uint_as_float(b.w)));
  } else {
    using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    union { uint4 u; T2 t[4]; } x{a}, y{b};
#pragma unroll
    for (int i = 0; i < 4; ++i) x.t[i] = __hadd2(x.t[i], y.t[i]);
    return x.u;
  }
}

// Loads V fp32 values (any alignment when V * 4 != 16 * k).
template <int V>
__device__ __forceinline__ void load_f32(const float* __restrict__ p, float (&out)[V]) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int i = 0; i < V; i += 4) {
      float4 f = __ldg(reinterpret_cast<const float4*>(p + i));
      out[i] = f.x; out[i + 1] = f.y; out[i + 2] = f.z; out[i + 3] = f.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) out[i] = __ldg(p + i);
  }
}

__device__ __forceinline__ bool is_aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// a / b for a >= 0, b > 0: 64-bit division costs ~70 instructions, so divide in 32 bits when both
// operands fit.
__device__ __forceinline__ int64_t div_nonneg(int64_t a, int64_t b) {
  return ((a | b) >> 31) == 0 ? static_cast<int64_t>(static_cast<uint32_t>(a) / static_cast<uint32_t>(b)) : a / b;
}

// n / f.d for n < 2^31 (FastDiv, types.h): a multiply-high and a shift.
__device__ __forceinline__ uint32_t fast_div(const FastDiv& f, uint32_t n) {
  return f.d == 1 ? n : __umulhi(n, f.m) >> f.shift;
}

// Element offset of a row; no division for rows in the first outer block.
__device__ __forceinline__ int64_t row_offset(const RowLayout& l, int64_t row) {
  if (row < l.inner) return row * l.stride_inner;
  const int64_t o = div_nonneg(row, l.inner);
  return o * l.stride_outer + (row - o * l.inner) * l.stride_inner;
}

// Sums over a group of G consecutive threads, N values at once. G <= 32: shuffles inside the warp.
// G > 32: the block is exactly one group; warps combine through `scratch` (at least N * G / 32
// floats), one barrier for all N. Every thread of the block must call it, once per `scratch` (no
// barrier after the read, so scratch is not reusable).
template <int G, int N>
__device__ __forceinline__ void group_sum(float (&v)[N], float* scratch) {
#pragma unroll
  for (int off = (G < 32 ? G : 32) / 2; off > 0; off /= 2)
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], off);
  if constexpr (G > 32) {
    constexpr int W = G / 32;
    const int warp = threadIdx.x / 32;
    if ((threadIdx.x & 31) == 0)
#pragma unroll
      for (int i = 0; i < N; ++i) scratch[i * W + warp] = v[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < N; ++i) {
      v[i] = 0.f;
#pragma unroll
      for (int w = 0; w < W; ++w) v[i] += scratch[i * W + w];
    }
  }
}

template <int G>
__device__ __forceinline__ float group_sum(float v, float* scratch) {
  float a[1] = {v};
  group_sum<G, 1>(a, scratch);
  return a[0];
}

// Block-wide sum for blocks of `threads` (multiple of 32, <= 1024) threads.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  const int warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  if ((threadIdx.x & 31) == 0) scratch[warp] = v;
  __syncthreads();
  v = 0.f;
  for (int w = 0; w < nwarps; ++w) v += scratch[w];
  __syncthreads();
  return v;
}

}  // namespace khub_kernels::cuda
