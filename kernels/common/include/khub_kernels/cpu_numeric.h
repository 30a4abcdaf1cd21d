// Host-side storage types and conversions for the CPU implementations: fp32 math, one
// round-to-nearest-even per stored value. bf16 and fp16 are converted by hand (bit manipulation):
// the compiler's _Float16 conversions call libgcc's __truncsfhf2/__extendhfsf2 (symbol version
// GCC_12), which manylinux_2_28 does not allow (docs/kernels.md).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "khub_kernels/types.h"

namespace khub_kernels::cpu {

struct Bf16 {
  uint16_t bits;
};
struct Half {
  uint16_t bits;
};

inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float to_float(float v) { return v; }
// Exact: every fp16 value is an fp32 value. NaNs keep their payload and come back quiet.
inline float to_float(Half v) {
  const uint32_t sign = static_cast<uint32_t>(v.bits & 0x8000u) << 16;
  const uint32_t em = v.bits & 0x7fffu;  // exponent and mantissa
  if (em >= 0x0400u && em < 0x7c00u) return bits_to_float(sign | ((em << 13) + ((127u - 15u) << 23)));  // normal
  if (em < 0x0400u) {  // zero or subnormal: em * 2^-24, exact in fp32
    return bits_to_float(sign | float_to_bits(static_cast<float>(em) * 0x1p-24f));
  }
  const uint32_t m = em & 0x3ffu;  // inf (m == 0) or NaN
  return bits_to_float(sign | 0x7f800000u | (m << 13) | (m ? 0x00400000u : 0u));
}
inline float to_float(Bf16 v) { return bits_to_float(static_cast<uint32_t>(v.bits) << 16); }

template <typename T> T from_float(float v);
template <> inline float from_float<float>(float v) { return v; }
// Round to nearest, ties to even; overflow gives inf, underflow gives (signed) subnormals or zero,
// NaN stays NaN (quiet, top payload bits kept).
template <> inline Half from_float<Half>(float v) {
  uint32_t u = float_to_bits(v);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return Half{static_cast<uint16_t>(sign | 0x7e00u | ((u >> 13) & 0x3ffu))};
  if (u >= 0x477ff000u) return Half{static_cast<uint16_t>(sign | 0x7c00u)};  // >= 65520 (and inf): inf
  if (u >= 0x38800000u) {  // >= 2^-14: normal fp16. Rebias, then round off the low 13 bits; a carry
    u -= (127u - 15u) << 23;  // into the exponent is the correct result (at most 0x7bff here).
    u += 0x0fffu + ((u >> 13) & 1u);
    return Half{static_cast<uint16_t>(sign | (u >> 13))};
  }
  if (u <= 0x33000000u) return Half{sign};  // <= 2^-25: rounds to zero (2^-25 is a tie, to even)
  // Subnormal result: |v| / 2^-24 = m * 2^(e - 126) with m the 24-bit significand, shift in [14, 24].
  const uint32_t e = u >> 23;
  const uint32_t m = (u & 0x007fffffu) | 0x00800000u;
  const uint32_t shift = 126u - e;
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;  // may reach 0x400, the smallest normal: correct
  return Half{static_cast<uint16_t>(sign | q)};
}
// Written as a select, not an early return, so loops that store bf16 can be vectorized.
template <> inline Bf16 from_float<Bf16>(float v) {
  const uint32_t u = float_to_bits(v);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x40u;
  return Bf16{static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded)};
}

// Rounds v to the precision of T and back.
template <typename T> inline float round_to(float v) { return to_float(from_float<T>(v)); }

inline float load_as_float(const void* p, DType d, int64_t i) {
  switch (d) {
    case DType::F32: return static_cast<const float*>(p)[i];
    case DType::F16: return to_float(static_cast<const Half*>(p)[i]);
    case DType::BF16: return to_float(static_cast<const Bf16*>(p)[i]);
  }
  return 0.f;
}

inline int64_t row_offset(const RowLayout& l, int64_t row) {
  return (row / l.inner) * l.stride_outer + (row % l.inner) * l.stride_inner;
}

// Row offsets of a layout from one row on, without a division a row (rows of 128 are short).
class RowWalk {
 public:
  RowWalk(const RowLayout& l, int64_t row) : l_(l), outer_(row / l.inner), inner_(row % l.inner) {}
  int64_t outer() const { return outer_; }
  int64_t inner() const { return inner_; }
  int64_t offset() const { return outer_ * l_.stride_outer + inner_ * l_.stride_inner; }
  void next() {
    if (++inner_ == l_.inner) {
      inner_ = 0;
      ++outer_;
    }
  }

 private:
  const RowLayout& l_;
  int64_t outer_, inner_;
};

// Sum of squares of p[0..n) as fp32 (stored values or fp32), in kSumLanes interleaved partial sums
// (element i into sum i mod kSumLanes) added pairwise at the end. One serial chain of adds held the
// row norms at ~1 ns an element; independent sums keep several vectors of adds in flight. The
// order is fixed, so results do not depend on how rows are split across threads. Always inlined, so
// the AVX2 copies of the row loops get it compiled for AVX2.
constexpr int kSumLanes = 16;

template <typename S>
[[gnu::always_inline]] inline float sum_squares(const S* p, int64_t n) {
  float acc[kSumLanes] = {};
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes)
    for (int j = 0; j < kSumLanes; ++j) {
      const float v = to_float(p[i + j]);
      acc[j] += v * v;
    }
  for (int j = 0; i < n; ++i, ++j) {
    const float v = to_float(p[i]);
    acc[j] += v * v;
  }
  for (int width = kSumLanes / 2; width > 0; width /= 2)
    for (int j = 0; j < width; ++j) acc[j] += acc[j + width];
  return acc[0];
}

// A row's RMSNorm scale, 1 / sqrt(mean(p^2) + eps), in fp32.
template <typename S>
[[gnu::always_inline]] inline float inv_rms(const S* p, int64_t n, float eps) {
  return 1.f / std::sqrt(sum_squares(p, n) / static_cast<float>(n) + eps);
}

// True when this CPU and its OS support AVX2 and FMA (the OS saves the YMM registers). Read with
// cpuid/xgetbv directly: __builtin_cpu_supports would pull libgcc's __cpu_model into the module.
inline bool cpu_has_avx2_fma() {
#if defined(__x86_64__)
  static const bool ok = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX) || !(c & bit_FMA)) return false;
    unsigned lo = 0, hi = 0;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6u) != 6u) return false;  // XMM and YMM state
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
  }();
  return ok;
#else
  return false;
#endif
}

// Whether a call takes its AVX2 + FMA path: where the CPU has them, unless KHUB_KERNELS_CPU_BASELINE=1
// (read on every call, so one process can run both paths; the tests do).
inline bool use_avx2_fma() {
  if (!cpu_has_avx2_fma()) return false;
  const char* v = std::getenv("KHUB_KERNELS_CPU_BASELINE");
  return !(v && v[0] == '1');
}

#if defined(__x86_64__)
template <typename F>
[[gnu::target("avx2,fma")]] void call_avx2_fma(const F& f) {
  f();
}
#endif

// Runs f() — a lambda over always-inline row loops — compiled for AVX2 + FMA where use_avx2_fma(),
// else as built. The modules are built for baseline x86-64 (SSE2, 4 floats a vector); the AVX2
// copy runs 8 a vector, and its results may differ from the baseline build's by FMA rounding
// (within the tolerances; ctest runs each op's tests on both paths). f and what it calls must
// inline into call_avx2_fma, or they run as baseline code.
template <typename F>
void with_best_isa(const F& f) {
#if defined(__x86_64__)
  if (use_avx2_fma()) return call_avx2_fma(f);
#endif
  f();
}

// Calls f.template operator()<T>() with T the storage type of d.
template <typename F> decltype(auto) dispatch(DType d, F&& f) {
  switch (d) {
    case DType::F16: return f.template operator()<Half>();
    case DType::BF16: return f.template operator()<Bf16>();
    case DType::F32: break;
  }
  return f.template operator()<float>();
}

}  // namespace khub_kernels::cpu
