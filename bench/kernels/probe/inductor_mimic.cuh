// Probe only: a CUDA transcription of inductor's fp32 RMSNorm kernel for rows of 3072
// (triton_red_fused_add_mean_mul_pow_rsqrt_0, exported by compile_code.py: one row a block of 512
// threads, two 16-byte chunks a thread, the second half masked; pass 1 reads L1 + L2 evict-last,
// pass 2 reads the weight evict-last and x evict-first; coherent loads, plain stores, 32-bit
// offsets, no griddepcontrol). Inductor's own kernel ran 0.4-0.6 us ahead of khub's cold and of
// copy16 on the same buffers on the H200; the options isolate what of its schedule that comes from.
//   G, CH  threads a row and 16-byte chunks a thread (G x CH x 4 >= n)
//   NC     the read-only (.nc) path instead of the coherent one
//   Pdl    griddepcontrol.wait first (launch it with the PDL attribute)
//   FixedN n compile-time (no bounds branches, no division), as inductor specialises it
//   Hoist  chunks whose second-pass loads are issued before the row's total is read
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace probe_mimic {

template <bool NC, bool L1Last, bool L2Last>
__device__ __forceinline__ uint4 ld(const float* p) {
  uint64_t pol;
  if constexpr (L2Last) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  else asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  uint4 v;
#define KHUB_MIMIC_LD(q)                                                                             \
  asm volatile(q " {%0, %1, %2, %3}, [%4], %5;" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), \
               "l"(pol))
  if constexpr (NC && L1Last) KHUB_MIMIC_LD("ld.global.nc.L1::evict_last.L2::cache_hint.v4.b32");
  else if constexpr (NC) KHUB_MIMIC_LD("ld.global.nc.L1::evict_first.L2::cache_hint.v4.b32");
  else if constexpr (L1Last) KHUB_MIMIC_LD("ld.global.L1::evict_last.L2::cache_hint.v4.b32");
  else KHUB_MIMIC_LD("ld.global.L1::evict_first.L2::cache_hint.v4.b32");
#undef KHUB_MIMIC_LD
  return v;
}

__device__ __forceinline__ float sq4(uint4 v) {
  const float a = __uint_as_float(v.x), b = __uint_as_float(v.y), c = __uint_as_float(v.z), d = __uint_as_float(v.w);
  return a * a + b * b + c * c + d * d;
}

template <int G, int CH, bool NC, bool Pdl, int FixedN = 0, int Hoist = 0>
__global__ void __launch_bounds__(G, 2048 / G) rms_mimic(const float* __restrict__ x, const float* __restrict__ w,
                                                         float* __restrict__ out, int n_arg, float eps) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (Pdl) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  const int n = FixedN > 0 ? FixedN : n_arg;
  __shared__ float part[G / 32];
  const int t = threadIdx.x, base = blockIdx.x * n;
  __builtin_assume(t < G);  // lets chunks that are always in the row go unpredicated
  uint4 v[CH];
  float ss = 0.f;
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    const int idx = (c * G + t) * 4;
    if (idx < n) v[c] = ld<NC, true, true>(x + base + idx);
  }
#pragma unroll
  for (int c = 0; c < CH; ++c)
    if ((c * G + t) * 4 < n) ss += sq4(v[c]);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if (t % 32 == 0) part[t / 32] = ss;
  __syncthreads();
  float tot = t < G / 32 ? part[t] : 0.f;
#pragma unroll
  for (int o = G / 64; o > 0; o >>= 1) tot += __shfl_xor_sync(0xffffffffu, tot, o);
  if (t == 0) part[0] = tot;
  __syncthreads();
  // Hoist: the first Hoist chunks' second-pass loads go out before the row's total is read (as
  // inductor's SASS has it for its first chunk), so their latency overlaps the rsqrt.
  uint4 xh[Hoist > 0 ? Hoist : 1], wh[Hoist > 0 ? Hoist : 1];
#pragma unroll
  for (int c = 0; c < Hoist; ++c) {
    const int idx = (c * G + t) * 4;
    if (idx < n) {
      wh[c] = ld<NC, true, true>(w + idx);
      xh[c] = ld<NC, false, false>(x + base + idx);
    }
  }
  const float r = rsqrtf(part[0] * (FixedN > 0 ? 1.f / FixedN : 1.f / static_cast<float>(n)) + eps);
#pragma unroll
  for (int c = 0; c < CH; ++c) {
    const int idx = (c * G + t) * 4;
    if (idx >= n) continue;
    const uint4 wv = c < Hoist ? wh[c < Hoist ? c : 0] : ld<NC, true, true>(w + idx);
    const uint4 xv = c < Hoist ? xh[c < Hoist ? c : 0] : ld<NC, false, false>(x + base + idx);
    float4 y;
    y.x = __uint_as_float(xv.x) * r * __uint_as_float(wv.x);
    y.y = __uint_as_float(xv.y) * r * __uint_as_float(wv.y);
    y.z = __uint_as_float(xv.z) * r * __uint_as_float(wv.z);
    y.w = __uint_as_float(xv.w) * r * __uint_as_float(wv.w);
    *reinterpret_cast<float4*>(out + base + idx) = y;
  }
}

}  // namespace probe_mimic
