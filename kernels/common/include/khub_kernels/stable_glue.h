// The stable-ABI counterpart of torch_glue.h: dtype mapping, layout extraction, the checks every op
// shares and output allocation, on torch::stable::Tensor. Included only by each kernel's
// torch-ext/torch_binding_stable.cpp. Failed checks throw std::runtime_error (STD_TORCH_CHECK), with
// the same wording as the torch bindings' c10::Error.
#pragma once
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "khub_kernels/arg_checks.h"
#include "khub_kernels/types.h"

namespace khub_kernels::stable_glue {

using Tensor = torch::stable::Tensor;
using torch::headeronly::ScalarType;

// "[2, 3, 4]": stable tensors have no printable sizes.
inline std::string shape_of(const Tensor& t) {
  std::ostringstream s;
  s << '[';
  for (int64_t i = 0; i < t.dim(); ++i) s << (i ? ", " : "") << t.size(i);
  s << ']';
  return s.str();
}

inline std::string strides_of(const Tensor& t) {
  std::ostringstream s;
  s << '[';
  for (int64_t i = 0; i < t.dim(); ++i) s << (i ? ", " : "") << t.stride(i);
  s << ']';
  return s.str();
}

// "cpu" or "cuda:0", as c10::Device prints.
inline std::string device_of(const Tensor& t) {
  if (t.is_cpu()) return "cpu";
  if (t.is_cuda()) return "cuda:" + std::to_string(t.get_device_index());
  return "device type " + std::to_string(static_cast<int>(t.device().type()));
}

inline DType dtype_of(const Tensor& t, const char* name) {
  switch (t.scalar_type()) {
    case ScalarType::Float: return DType::F32;
    case ScalarType::Half: return DType::F16;
    case ScalarType::BFloat16: return DType::BF16;
    default: break;
  }
  STD_TORCH_CHECK(false, name, ": unsupported dtype ", t.scalar_type(), " (expected float32, float16 or bfloat16)");
}

inline void check_dtype(const Tensor& t, ScalarType want, const char* name) {
  STD_TORCH_CHECK(t.scalar_type() == want, name, ": expected dtype ", want, ", got ", t.scalar_type());
}

inline void check_device(const Tensor& t, const Tensor& x, const char* name) {
  STD_TORCH_CHECK(t.device() == x.device(), name, ": expected device ", device_of(x), " (same as the input), got ",
                  device_of(t));
}

inline void check_backend(const Tensor& x, const char* op) {
  STD_TORCH_CHECK(x.is_cpu() || x.is_cuda(), op, ": unsupported device ", device_of(x));
}

inline void check_last_contiguous(const Tensor& t, const char* name) {
  STD_TORCH_CHECK(t.dim() >= 1, name, ": expected at least 1 dimension, got a scalar");
  STD_TORCH_CHECK(t.size(-1) <= 1 || t.stride(-1) == 1, name,
                  ": last dimension must be contiguous (stride 1), got stride ", t.stride(-1),
                  "; call .contiguous() first");
}

inline bool same_sizes(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int64_t i = 0; i < a.dim(); ++i)
    if (a.size(i) != b.size(i)) return false;
  return true;
}

// Views t as [outer, inner, n] rows (see RowLayout), as glue::row_layout does.
inline RowLayout row_layout(const Tensor& t, const char* name) {
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
    STD_TORCH_CHECK(t.size(i) == 1 || t.stride(i) == t.stride(i + 1) * t.size(i + 1), name,
                    ": leading dimensions cannot be collapsed into one row stride (sizes ", shape_of(t), ", strides ",
                    strides_of(t), "); call .contiguous() first");
  l.rows = outer * l.inner;
  if (l.inner == 0) l.inner = 1;
  return l;
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// True when every row start of t (and its base) is 16-byte aligned.
inline bool rows_aligned16(const Tensor& t, const RowLayout& l) {
  const auto es = static_cast<int64_t>(t.element_size());
  return aligned16(t.data_ptr()) && (l.stride_outer * es) % 16 == 0 && (l.stride_inner * es) % 16 == 0;
}

// Calls the ATen op name.overload through the dispatcher and returns its (first) output. Arguments
// are converted as the stable ABI converts them (Tensor, int64_t, double, bool, enums); an optional
// schema argument (`ScalarType?`) must be passed as std::optional or std::nullopt, whose encoding
// differs from the plain value's.
template <typename... Args>
Tensor call_aten(const char* name, const char* overload, const Args&... args) {
  std::array<StableIValue, std::max<std::size_t>(sizeof...(Args), 1)> stack{torch::stable::detail::from(args)...};
  TORCH_ERROR_CODE_CHECK(torch_call_dispatcher(name, overload, stack.data(), TORCH_ABI_VERSION));
  return torch::stable::detail::to<Tensor>(stack[0]);
}

// The output an op allocates for input t: t's sizes, contiguous, t's dtype and device, through
// aten::empty_like. Never reading the sizes here keeps them symbolic under torch.compile's fake
// tensors, so the Meta registrations allocate through it too.
inline Tensor empty_output_like(const Tensor& t) {
  return call_aten("aten::empty_like", "", t, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                   std::optional(torch::headeronly::MemoryFormat::Contiguous));
}

// The output a real (CPU or CUDA) kernel allocates for input t: t's sizes (the last one `last` when
// given), contiguous, t's dtype and device, as empty_output_like but through the C shim's
// empty_strided. aten::empty_like by name goes through the dispatcher's lookup and its boxed call:
// 1.16 us against 0.54 us here (2-core Xeon, CPU tensors), on every call of every op. The sizes are
// read, so Meta keeps empty_output_like.
inline Tensor new_output_like(const Tensor& t, std::optional<int64_t> last = std::nullopt) {
  const int64_t d = t.dim();
  std::vector<int64_t> sizes(static_cast<std::size_t>(d)), strides(static_cast<std::size_t>(d));
  int64_t stride = 1;
  for (int64_t i = d - 1; i >= 0; --i) {
    sizes[i] = i == d - 1 && last ? *last : t.size(i);
    strides[i] = stride;  // as torch's contiguous strides: a dimension of size 0 counts as 1
    stride *= std::max<int64_t>(sizes[i], 1);
  }
  int32_t dtype = 0, device_type = 0, device_index = 0;
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(t.get(), &dtype));
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_type(t.get(), &device_type));
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_index(t.get(), &device_index));
  AtenTensorHandle out = nullptr;
  TORCH_ERROR_CODE_CHECK(
      aoti_torch_empty_strided(d, sizes.data(), strides.data(), dtype, device_type, device_index, &out));
  return Tensor(out);
}

// Runs f(row_begin, row_end) over [0, rows) in parts of at least ~64K elements (rows of n) through
// torch's own intra-op pool (torch::stable::parallel_for, torch's at::parallel_for behind the C shim:
// nested calls run serially). Results do not depend on the split (the kernels' rows are independent).
template <typename F>
void parallel_rows(int64_t rows, int64_t n, const F& f) {
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(n, 1));
  if (rows <= grain) {
    f(0, rows);
    return;
  }
  torch::stable::parallel_for(0, rows, grain, f);
}

// The outputs an op allocates, taken by the kernels' shared code (<name>_args.h): take(i, like, op,
// name) allocates output i (0 or 1) with like's sizes, contiguous, and returns where to write it.
// Optional: a default stable Tensor would allocate a handle.
struct NewOutputs {
  std::optional<Tensor> t[2];
  void* take(int i, const Tensor& like, const char* /*op*/, const char* /*name*/) {
    t[i] = new_output_like(like);
    return t[i]->data_ptr();
  }
};

struct CudaGlue;  // stable_cuda_glue.h

// The glue as the policy of the kernels' shared checks (arg_checks.h). Failures are std::runtime_error
// worded as STD_TORCH_CHECK words them, one kind for values and dtypes; dtypes and shapes print as the
// torch bindings print them.
struct Glue {
  using Tensor = stable_glue::Tensor;
  using Dtype = ScalarType;
  using Cuda = CudaGlue;
  static constexpr Dtype kFloat32 = ScalarType::Float;
  static constexpr Dtype kInt32 = ScalarType::Int;

  template <typename... Parts>
  [[noreturn]] static void fail_value(const CheckSite& site, const Parts&... parts) {
    throw std::runtime_error(
        STD_TORCH_CHECK_MSG(false, "", site.func, ", ", site.file, ":", site.line, ", ", parts...));
  }
  template <typename... Parts>
  [[noreturn]] static void fail_type(const CheckSite& site, const Parts&... parts) {
    fail_value(site, parts...);
  }

  static ScalarType dtype_name(const Tensor& t) { return t.scalar_type(); }
  static bool same_dtype(const Tensor& a, const Tensor& b) { return a.scalar_type() == b.scalar_type(); }
  static bool is_float32(const Tensor& t) { return t.scalar_type() == kFloat32; }
  static std::string shape(const Tensor& t) { return shape_of(t); }
  // What a failed rank check says it got: the number of dimensions (Meta's symbolic sizes cannot be read).
  static std::string rank_found(const Tensor& t) {
    return "a tensor of " + std::to_string(t.dim()) + " dimensions";
  }
  static bool same_sizes(const Tensor& a, const Tensor& b) { return stable_glue::same_sizes(a, b); }

  static void check_backend(const Tensor& x, const char* op) { stable_glue::check_backend(x, op); }
  static DType dtype_of(const Tensor& t, const char* name) { return stable_glue::dtype_of(t, name); }
  static void check_dtype(const Tensor& t, Dtype want, const char* name) { stable_glue::check_dtype(t, want, name); }
  static void check_device(const Tensor& t, const Tensor& x, const char* name) {
    stable_glue::check_device(t, x, name);
  }
  static void check_last_contiguous(const Tensor& t, const char* name) {
    stable_glue::check_last_contiguous(t, name);
  }
  static RowLayout row_layout(const Tensor& t, const char* name) { return stable_glue::row_layout(t, name); }
  static bool rows_aligned16(const Tensor& t, const RowLayout& l) { return stable_glue::rows_aligned16(t, l); }
  static bool aligned16(const void* p) { return stable_glue::aligned16(p); }
  template <typename F>
  static void parallel_rows(int64_t rows, int64_t n, const F& f) {
    stable_glue::parallel_rows(rows, n, f);
  }
};

}  // namespace khub_kernels::stable_glue
