// Torch-facing helpers for the bindings: dtype mapping, layout extraction and the checks every op
// shares. Included only by each kernel's torch-ext/torch_binding.cpp (one torch TU per variant).
#pragma once
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "khub_kernels/arg_checks.h"
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

// The output an op allocates for input t: t's sizes, contiguous, t's dtype and device. Sizes stay
// symbolic under torch.compile's fake tensors. The kernels and the Meta registrations both
// allocate through it, so they agree on every output's metadata.
inline at::Tensor empty_output_like(const at::Tensor& t) {
  return at::empty_symint(t.sym_sizes(), t.options().memory_format(at::MemoryFormat::Contiguous));
}

// Runs f(row_begin, row_end) over [0, rows) in up to at::get_num_threads() parts of at least ~64K
// elements (rows of n), on the calling thread and as tasks on torch's inter-op pool (at::launch).
// at::parallel_for would run serially here: its OpenMP body needs the module built with -fopenmp,
// which would load a second OpenMP runtime next to torch's. Parts are claimed from a counter, so
// the calling thread runs every part no pool thread has started (no deadlock when the pool is
// busy, e.g. when this op itself runs in pool tasks), then yields until the parts being run are
// done (a condition variable's wait would need a libstdc++ newer than manylinux_2_28 allows); a
// task that starts after all parts are claimed touches nothing but the shared counters.
template <typename F>
void parallel_rows(int64_t rows, int64_t n, const F& f) {
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(n, 1));
  const int64_t parts = std::min<int64_t>(at::get_num_threads(), (rows + grain - 1) / grain);
  if (parts <= 1 || at::in_parallel_region()) {
    f(0, rows);
    return;
  }
  struct Counters {
    std::atomic<int64_t> next{0}, finished{0};
  };
  const auto st = std::make_shared<Counters>();
  const int64_t per = (rows + parts - 1) / parts;
  const auto run_parts = [st, per, rows, parts, fp = &f] {
    for (int64_t p; (p = st->next.fetch_add(1)) < parts;) {
      (*fp)(p * per, std::min(rows, (p + 1) * per));
      st->finished.fetch_add(1, std::memory_order_release);
    }
  };
  for (int64_t p = 1; p < parts; ++p) at::launch(run_parts);
  run_parts();
  while (st->finished.load(std::memory_order_acquire) < parts) std::this_thread::yield();
}

// The outputs an op allocates, taken by the kernels' shared code (<name>_args.h): take(i, like, op,
// name) allocates output i (0 or 1) with like's sizes, contiguous, and returns where to write it.
struct NewOutputs {
  at::Tensor t[2];
  void* take(int i, const at::Tensor& like, const char* /*op*/, const char* /*name*/) {
    t[i] = empty_output_like(like);
    return t[i].data_ptr();
  }
};

struct CudaGlue;  // torch_cuda_glue.h

// The glue as the policy of the kernels' shared checks (arg_checks.h). Failures are c10::Error raised
// as TORCH_CHECK raises them, one kind for values and dtypes; dtypes and shapes print as torch prints
// them.
struct Glue {
  using Tensor = at::Tensor;
  using Dtype = at::ScalarType;
  using Cuda = CudaGlue;
  static constexpr Dtype kFloat32 = at::kFloat;
  static constexpr Dtype kInt32 = at::kInt;

  template <typename... Parts>
  [[noreturn]] static void fail_value(const CheckSite& at, const Parts&... parts) {
    ::c10::detail::torchCheckFail(at.func, at.file, at.line, TORCH_CHECK_MSG(false, "", parts...));
  }
  template <typename... Parts>
  [[noreturn]] static void fail_type(const CheckSite& at, const Parts&... parts) {
    fail_value(at, parts...);
  }

  static at::ScalarType dtype_name(const Tensor& t) { return t.scalar_type(); }
  static bool same_dtype(const Tensor& a, const Tensor& b) { return a.scalar_type() == b.scalar_type(); }
  static bool is_float32(const Tensor& t) { return t.scalar_type() == kFloat32; }
  static at::IntArrayRef shape(const Tensor& t) { return t.sizes(); }
  // What a failed rank check says it got: the sizes, which Meta's symbolic ones too can print.
  static c10::SymIntArrayRef rank_found(const Tensor& t) { return t.sym_sizes(); }
  static bool same_sizes(const Tensor& a, const Tensor& b) { return a.sizes() == b.sizes(); }

  static void check_backend(const Tensor& x, const char* op) { glue::check_backend(x, op); }
  static DType dtype_of(const Tensor& t, const char* name) { return glue::dtype_of(t, name); }
  static void check_dtype(const Tensor& t, Dtype want, const char* name) { glue::check_dtype(t, want, name); }
  static void check_device(const Tensor& t, const Tensor& x, const char* name) { glue::check_device(t, x, name); }
  static void check_last_contiguous(const Tensor& t, const char* name) { glue::check_last_contiguous(t, name); }
  static RowLayout row_layout(const Tensor& t, const char* name) { return glue::row_layout(t, name); }
  static bool rows_aligned16(const Tensor& t, const RowLayout& l) { return glue::rows_aligned16(t, l); }
  static bool aligned16(const void* p) { return glue::aligned16(p); }
  template <typename F>
  static void parallel_rows(int64_t rows, int64_t n, const F& f) {
    glue::parallel_rows(rows, n, f);
  }
};

}  // namespace khub_kernels::glue
