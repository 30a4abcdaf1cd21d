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
