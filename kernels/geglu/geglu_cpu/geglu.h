// GEGLU (diffusers: value = first half, gate = second half, y = value * gelu(gate)) and plain GELU:
// arguments shared by the CPU implementation and the CUDA launcher. fp32 math, one rounding.
#pragma once
#include <cstdint>

#include "khub_kernels/types.h"

namespace khub_kernels::geglu {

enum class Act : int {
  GeluErf = 0,   // 0.5 g (1 + erf(g / sqrt 2))
  GeluTanh = 1,  // 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3)))
};

struct GegluArgs {
  DType dtype = DType::BF16;
  const void* x = nullptr;  // gated: [rows, 2n] (value | gate); plain: [rows, n]
  RowLayout x_layout;
  void* out = nullptr;  // [rows, n] contiguous
  int64_t n = 0;
  bool gated = true;
  Act act = Act::GeluErf;
};

// Rows [row_begin, row_end) of the op; the rows are independent, so ranges can run in parallel.
void geglu_cpu(const GegluArgs& a, int64_t row_begin, int64_t row_end);

}  // namespace khub_kernels::geglu
