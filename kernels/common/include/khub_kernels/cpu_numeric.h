// Host-side storage types and conversions for the CPU implementations: fp32 math, one
// round-to-nearest-even per stored value. bf16 is converted by hand; fp16 uses the compiler's _Float16.
#pragma once
#include <cstdint>
#include <cstring>

#include "khub_kernels/types.h"

namespace khub_kernels::cpu {

struct Bf16 {
  uint16_t bits;
};
using Half = _Float16;

inline float to_float(float v) { return v; }
inline float to_float(Half v) { return static_cast<float>(v); }
inline float to_float(Bf16 v) {
  uint32_t u = static_cast<uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

template <typename T> T from_float(float v);
template <> inline float from_float<float>(float v) { return v; }
template <> inline Half from_float<Half>(float v) { return static_cast<Half>(v); }
template <> inline Bf16 from_float<Bf16>(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return Bf16{static_cast<uint16_t>((u >> 16) | 0x40u)};  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return Bf16{static_cast<uint16_t>(u >> 16)};
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
