// RMSNorm and fused residual-add + RMSNorm: arguments shared by the CPU implementation and the
// CUDA launcher. y = x * rsqrt(mean(x^2) + eps) [* w], reduced in fp32; `rounding` picks where the
// result is rounded to storage precision.
#pragma once
#include <cstdint>

#include "khub_kernels/types.h"

namespace khub_kernels::rmsnorm {

enum class Rounding : int {
  Fused = 0,      // F.rms_norm: fp32 math, one rounding
  Qwen3 = 1,      // transformers Qwen3RMSNorm: round(x*r) to x dtype, then round(w * that)
  Diffusers = 2,  // diffusers RMSNorm: round(x*r) to the weight dtype, then round(that * w)
};

struct RmsNormArgs {
  DType dtype = DType::BF16;         // x, residual, outputs
  DType weight_dtype = DType::BF16;  // dtype or F32
  const void* x = nullptr;
  RowLayout x_layout;
  const void* residual = nullptr;  // fused add when non-null: s = round(x + residual) is normalised
  RowLayout residual_layout;
  const void* weight = nullptr;  // [n] contiguous, optional
  void* out = nullptr;           // [rows, n] contiguous
  void* residual_out = nullptr;  // [rows, n] contiguous, receives s (required with residual)
  int64_t n = 0;
  float eps = 1e-6f;
  Rounding rounding = Rounding::Fused;
};

// Rows [row_begin, row_end) of the op; the rows are independent, so ranges can run in parallel.
void rms_norm_cpu(const RmsNormArgs& a, int64_t row_begin, int64_t row_end);

}  // namespace khub_kernels::rmsnorm
