// CPU GEGLU / GELU: the CUDA kernel's formulas, in fp32.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "geglu.h"
#include "khub_kernels/cpu_numeric.h"

namespace khub_kernels::geglu {
namespace {

using namespace khub_kernels::cpu;

// exp(x) with branch-free arithmetic the compiler can vectorize (std::exp, std::erf and std::tanh
// are scalar library calls, which left this path 13x slower than eager's vectorized GELU): x is
// clamped to [-87, 89], n = round(x / ln 2) by the 1.5 * 2^23 trick, r = x - n ln 2 in two parts
// (|r| <= 0.35), e^r by its degree-6 Taylor polynomial (relative error <= 2e-7), times 2^n built in
// the exponent bits. Past ~88.4 the result is inf (n = 128), so inf and NaN inputs come out as
// with __expf: GELU-tanh(-inf) is NaN, as on CUDA and in torch.
[[gnu::always_inline]] inline float exp_approx(float x) {
  x = std::min(std::max(x, -87.f), 89.f);
  const float n = (x * 1.44269504f + 12582912.f) - 12582912.f;
  const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;
  float p = 1.f / 720.f;
  p = p * r + 1.f / 120.f;
  p = p * r + 1.f / 24.f;
  p = p * r + 1.f / 6.f;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  return p * bits_to_float(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
}

// The CUDA kernel's formulas (geglu.cuh): 1 + erf(x) from the Abramowitz-Stegun 7.1.26 erfc
// (|error| <= 1.5e-7, no cancellation in the negative tail), and 0.5 (1 + tanh u) as
// 1 / (1 + exp(-2u)).
[[gnu::always_inline]] inline float one_plus_erf(float x) {
  const float ax = std::fabs(x);
  const float t = 1.f / (0.3275911f * ax + 1.f);
  float p = 1.061405429f * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float erfc = p * t * exp_approx(-ax * ax);
  return x >= 0.f ? 2.f - erfc : erfc;
}

template <Act A>
[[gnu::always_inline]] inline float gelu(float g) {
  if constexpr (A == Act::GeluErf) return 0.5f * g * one_plus_erf(g * 0.70710678118654752f);
  const float inner = 0.79788456080286536f * (g + 0.044715f * g * g * g);
  return g / (1.f + exp_approx(-2.f * inner));
}

// Gated and the activation are template parameters so the element loop has no branch to keep it
// from being vectorized.
template <typename T, bool Gated, Act A>
[[gnu::always_inline]] inline void rows(const GegluArgs& a, int64_t row_begin, int64_t row_end) {
  const auto* x = static_cast<const T*>(a.x);
  auto* out = static_cast<T*>(a.out);
  const int64_t n = a.n;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const T* xr = x + row_offset(a.x_layout, row);
    T* o = out + row * n;
    for (int64_t i = 0; i < n; ++i) {
      const float y = Gated ? to_float(xr[i]) * gelu<A>(to_float(xr[n + i])) : gelu<A>(to_float(xr[i]));
      o[i] = from_float<T>(y);
    }
  }
}

// On baseline x86-64 this loop ran 2.4x slower than eager's (AVX2) GELU: with_best_isa runs its
// AVX2 + FMA copy where the CPU has them.
template <typename T, bool Gated, Act A>
void run(const GegluArgs& a, int64_t row_begin, int64_t row_end) {
  with_best_isa([&] [[gnu::always_inline]] { rows<T, Gated, A>(a, row_begin, row_end); });
}

template <typename T>
void run(const GegluArgs& a, int64_t row_begin, int64_t row_end) {
  if (a.gated) {
    if (a.act == Act::GeluErf) run<T, true, Act::GeluErf>(a, row_begin, row_end);
    else run<T, true, Act::GeluTanh>(a, row_begin, row_end);
  } else {
    if (a.act == Act::GeluErf) run<T, false, Act::GeluErf>(a, row_begin, row_end);
    else run<T, false, Act::GeluTanh>(a, row_begin, row_end);
  }
}

}  // namespace

void geglu_cpu(const GegluArgs& a, int64_t row_begin, int64_t row_end) {
  dispatch(a.dtype, [&]<typename T>() { run<T>(a, row_begin, row_end); });
}

}  // namespace khub_kernels::geglu
