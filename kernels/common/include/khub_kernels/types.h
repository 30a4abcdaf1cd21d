// Plain descriptions of tensors shared by the CPU implementations, the CUDA launchers and the torch
// bindings. No torch and no CUDA headers: the same structs cross every boundary.
#pragma once
#include <cstdint>

namespace khub_kernels {

enum class DType : int { F32 = 0, F16 = 1, BF16 = 2 };

inline int dtype_size(DType d) { return d == DType::F32 ? 4 : 2; }

// Rows of a tensor viewed as [outer, inner, n] with a contiguous last dimension: row r lives at
// element offset (r / inner) * stride_outer + (r % inner) * stride_inner. Offsets are 64-bit.
struct RowLayout {
  int64_t rows = 0;
  int64_t inner = 1;
  int64_t stride_outer = 0;
  int64_t stride_inner = 0;
};

// The same rows as one outer block when they sit at one constant stride (a contiguous [B, S, n]
// tensor, or any 2-D one), so a kernel finds a row's offset without a division. For ops whose rows
// carry no meaning beyond their order (RMSNorm; not AdaLN or RoPE, which read b and s from the
// layout). q/k heads [1,8192,32,128]: a 32-bit division per row of one 16-byte chunk a thread.
inline RowLayout as_one_block(RowLayout l) {
  if (l.inner == 1) l.stride_inner = l.stride_outer;
  else if (l.stride_outer != l.inner * l.stride_inner) return l;
  l.inner = l.rows > 0 ? l.rows : 1;
  l.stride_outer = 0;
  return l;
}

// Division of 31-bit dividends by a run-time divisor d (1 <= d < 2^31) with a multiply-high and a
// shift instead of a division sequence: with s = ceil(log2 d) and m = ceil(2^(31+s) / d),
// n / d = (n * m) >> (31 + s) for every n < 2^31, because m * d - 2^(31+s) < d <= 2^s and so
// n * (m * d - 2^(31+s)) < 2^(31+s). m fits in 32 bits (d > 2^(s-1)), so the device takes
// umulhi(n, m) >> (s - 1). d == 1 is the identity (s would be 0).
struct FastDiv {
  uint32_t d = 1;
  uint32_t m = 0;
  int shift = 0;  // s - 1
};

inline FastDiv make_fast_div(uint32_t d) {
  FastDiv f;
  f.d = d;
  if (d <= 1) return f;
  int s = 0;
  while ((uint64_t{1} << s) < d) ++s;
  f.m = static_cast<uint32_t>(((uint64_t{1} << (31 + s)) + d - 1) / d);
  f.shift = s - 1;
  return f;
}

// The device's computation on the host (tests).
inline uint32_t fast_div_host(const FastDiv& f, uint32_t n) {
  if (f.d == 1) return n;
  return static_cast<uint32_t>((static_cast<uint64_t>(n) * f.m) >> 32) >> f.shift;
}

// A per-row modulation vector of length n for row (b, s), b = row / inner, s = row % inner:
// value[d] = (table ? table[d] : 0) + base[b * stride_b + s * stride_s + d] (how it is rounded is
// the op's to say).
// base == nullptr means "absent" (the op decides what absent means).
struct ModSource {
  const void* table = nullptr;
  const void* base = nullptr;
  int64_t stride_b = 0;
  int64_t stride_s = 0;
};

}  // namespace khub_kernels
