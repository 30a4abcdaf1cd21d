// Torch-facing helpers for the bindings: dtype mapping, layout extraction and the checks every op
// shares. Included only by each kernel's torch-ext/torch_binding.cpp (one torch TU per variant).
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <cstdint>

#include "khub_kernels/types.h"

namespace khub_kernels::glue {

inline DType dtype_of(const at::Tensor& t, const char* name) {
  switch (t.scalar_type()) {
    case at::kFloat: return DType::F32;
    case at::kHalf: return DType::F16;
    case at::kBFloat16: return DType::BF16;
    default: break;
  }
  TORCH_CHECK(false, name, ": unsupported dtype ", t.scalar_type(), " (expected float32, float16 or bfloat16)");
}

inline void check_dtype(const at::Tensor& t, at::ScalarType want, const char* name) {
  TORCH_CHECK(t.scalar_type() == want, name, ": expected dtype ", want, ", got ", t.scalar_type());
}

inline void check_device(const at::Tensor& t, const at::Tensor& x, const char* name) {
  TORCH_CHECK(t.device() == x.device(), name, ": expected device ", x.device(), " (same as the input), got ",
              t.device());
}

inline void check_backend(const at::Tensor& x, const char* op) {
  TORCH_CHECK(x.device().is_cpu() || x.device().is_cuda(), op, ": unsupported device ", x.device());
}

inline void check_last_contiguous(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.dim() >= 1, name, ": expected at least 1 dimension, got a scalar");
  TORCH_CHECK(t.size(-1) <= 1 || t.stride(-1) == 1, name, ": last dimension must be contiguous (stride 1), got stride ",
              t.stride(-1), "; call .contiguous() first");
}

// Views t as [outer, inner, n] rows (see RowLayout); the dimensions before the last two must
// collapse into one stride.
inline RowLayout row_layout(const at::Tensor& t, const char* name) {
  check_last_contiguous(t, name);
  RowLayout l;
  const int64_t d = t.dim();
  if (d == 1) {
    l.rows = 1;
    return l;
  }
  if (d == 2) {
    l.rows = t.size(0);
    l.stride_outer = t.stride(0);
    return l;
  }
  l.inner = t.size(d - 2);
  l.stride_inner = t.stride(d - 2);
  int64_t outer = 1;
  for (int64_t i = 0; i < d - 2; ++i) outer *= t.size(i);
  l.stride_outer = t.stride(d - 3);
  for (int64_t i = d - 4; i >= 0; --i)
    TORCH_CHECK(t.size(i) == 1 || t.stride(i) == t.stride(i + 1) * t.size(i + 1), name,
                ": leading dimensions cannot be collapsed into one row stride (sizes ", t.sizes(), ", strides ",
                t.strides(), "); call .contiguous() first");
  l.rows = outer * l.inner;
  if (l.inner == 0) l.inner = 1;
  return l;
}

// True when every row start of t (and its base) is 16-byte aligned.
inline bool rows_aligned16(const at::Tensor& t, const RowLayout& l) {
  const int64_t es = t.element_size();
  const auto base = reinterpret_cast<uintptr_t>(t.data_ptr());
  return base % 16 == 0 && (l.stride_outer * es) % 16 == 0 && (l.stride_inner * es) % 16 == 0;
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace khub_kernels::glue
