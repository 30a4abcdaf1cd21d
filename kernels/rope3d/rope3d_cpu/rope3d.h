// LTX-Video 3D RoPE (diffusers transformer_ltx.py) over all D channels of q and k [B, S, D]:
//   out[2i]   = x[2i]   * cos[2i]   - x[2i+1] * sin[2i]
//   out[2i+1] = x[2i+1] * cos[2i+1] + x[2i]   * sin[2i+1]
// each product and the sum rounded to fp32 as eager does, then one rounding to the storage dtype.
// Trig comes from full fp32 cos/sin tensors (Api), per-axis tables gathered by per-token indices
// (Table), or per-token coordinates and frequencies (Coords). Pair p < pad_pairs = (D % 6) / 2 is
// the identity; else j = p - pad_pairs, frequency k = j / 3, axis a = j % 3 (0 frame, 1 h, 2 w).
// Optionally an RMSNorm (weight optional, eps) of each row precedes the rotation (fp32, no rounding
// between the two).
#pragma once
#include <cstdint>

#include "khub_kernels/types.h"

namespace khub_kernels::rope3d {

enum class TrigMode : int { Api = 0, Table = 1, Coords = 2 };

struct TrigParams {
  TrigMode mode = TrigMode::Api;
  // Api: fp32 [B or 1, S, D], last dim contiguous; element (b, s, c) at b * stride_b + s * stride_s + c.
  const float* cos = nullptr;
  const float* sin = nullptr;
  int64_t stride_b = 0, stride_s = 0;
  // Table: fp32 [P, F] contiguous; int32 index [B or 1, S, 3] (same stride fields, in index elements).
  const float* cos_table = nullptr;
  const float* sin_table = nullptr;
  const int32_t* index = nullptr;
  // Coords: fp32 coords [B or 1, S, 3] (same stride fields); angle = freqs[k] * (2 g_a - 1).
  const float* coords = nullptr;
  const float* freqs = nullptr;
  int64_t seq = 1;  // S, to split a row into (b, s)
  int pad_pairs = 0;
  int f = 0;  // frequencies per axis, D / 6
  // seq as a multiply-high divisor, for the CUDA token kernels' Lean variant (set by their launcher;
  // last, so the fields above keep their offsets in the kernels' parameters).
  FastDiv seq_div;
};

struct RopeArgs {
  DType dtype = DType::BF16;
  const void* q = nullptr;
  RowLayout q_layout;
  const void* k = nullptr;  // optional; same [B, S, D] as q
  RowLayout k_layout;
  void* q_out = nullptr;  // [rows, D] contiguous
  void* k_out = nullptr;
  int64_t d = 0;
  TrigParams trig;
  bool norm = false;
  const void* q_weight = nullptr;  // [D], dtype or F32
  const void* k_weight = nullptr;
  DType weight_dtype = DType::BF16;
  float eps = 1e-5f;
};

// Tokens [row_begin, row_end) of q (and k); the rows are independent, so ranges can run in parallel.
void rope3d_cpu(const RopeArgs& a, int64_t row_begin, int64_t row_end);

}  // namespace khub_kernels::rope3d
