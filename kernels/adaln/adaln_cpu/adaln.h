// AdaLN (LTX form): y = rms_norm_noweight(x, eps) * (1 + scale) + shift, optionally after the gated
// residual h_new = h + gate * delta. Arguments shared by the CPU implementation and the CUDA
// launcher. Modulation vectors (table + base) are rounded to the dtype, as the model's own add of
// two such tensors rounds them; the reduction and the rest in fp32, one rounding per output.
#pragma once
#include <cstdint>

#include "khub_kernels/types.h"

namespace khub_kernels::adaln {

struct AdaLnArgs {
  DType dtype = DType::BF16;  // every tensor has this dtype
  const void* x = nullptr;    // [B, S, n] rows (RowLayout with inner = S)
  RowLayout x_layout;
  const void* delta = nullptr;  // gated residual when set: [B, S, n]
  RowLayout delta_layout;
  ModSource gate;   // required with delta
  ModSource scale;  // required
  ModSource shift;  // required
  void* out = nullptr;    // [rows, n] contiguous
  void* h_out = nullptr;  // [rows, n] contiguous, receives round(x + gate * delta) (with delta)
  int64_t n = 0;
  float eps = 1e-6f;
};

// Rows [row_begin, row_end) of the op; the rows are independent, so ranges can run in parallel.
void adaln_cpu(const AdaLnArgs& a, int64_t row_begin, int64_t row_end);

}  // namespace khub_kernels::adaln
