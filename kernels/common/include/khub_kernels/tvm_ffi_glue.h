// The tvm-ffi counterpart of stable_glue.h: a Tensor view over a caller's DLTensor (tvm::ffi::TensorView)
// with the accessors the bindings use, dtype mapping, layout extraction, the checks every op shares
// and the checks of caller-allocated outputs. Included only by each kernel's
// tvm-ffi-ext/tvm_ffi_binding.cpp. No torch: failed checks throw tvm::ffi::Error (TVM_FFI_THROW) of
// kind ValueError (shapes, values, devices) or TypeError (dtypes), which the caller receives through
// TVMFFIErrorMoveFromRaised with kind and message.
#pragma once
#include <tvm/ffi/tvm_ffi.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "khub_kernels/arg_checks.h"
#include "khub_kernels/types.h"

namespace khub_kernels::ffi_glue {

// Concatenates the streamable parts of a message.
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  return s.str();
}

}  // namespace khub_kernels::ffi_glue

// Throws tvm::ffi::Error of `kind` (ValueError, TypeError, RuntimeError) with the message parts.
#define KHUB_FFI_CHECK(cond, kind, ...)                                      \
  do {                                                                       \
    if (!(cond)) TVM_FFI_THROW(kind) << ::khub_kernels::ffi_glue::cat(__VA_ARGS__); \
  } while (0)

namespace khub_kernels::ffi_glue {

// Which exported function runs: `<op>_cpu` takes CPU tensors, `<op>_cuda` CUDA ones.
enum class Backend { Cpu, Cuda };

inline bool same_dtype(DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

inline std::string dtype_name(DLDataType t) {
  if (t.lanes == 1) {
    if (t.code == kDLFloat) return "float" + std::to_string(t.bits);
    if (t.code == kDLBfloat && t.bits == 16) return "bfloat16";
    if (t.code == kDLInt) return "int" + std::to_string(t.bits);
    if (t.code == kDLUInt) return "uint" + std::to_string(t.bits);
    if (t.code == kDLBool) return "bool";
  }
  return "dtype(code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " +
         std::to_string(t.lanes) + ")";
}

constexpr DLDataType kFloat32{kDLFloat, 32, 1};
constexpr DLDataType kInt32{kDLInt, 32, 1};

// A caller's tensor as the bindings read it: sizes, strides (DLPack's null strides mean compact row-major),
// data pointer with byte_offset applied, dtype and device.
class Tensor {
 public:
  Tensor(tvm::ffi::TensorView v)  // NOLINT: implicit, as the exported functions receive TensorView
      : data_(static_cast<char*>(v.data_ptr()) + v.byte_offset()), dtype_(v.dtype()), device_(v.device()) {
    const int64_t d = v.ndim();
    sizes_.assign(v.shape().begin(), v.shape().end());
    strides_.resize(static_cast<size_t>(d));
    // DLPack allows null strides (compact row-major), which TensorView::strides() refuses; a contiguous
    // tensor gets its compact strides (equal to the given ones wherever they matter: dimensions of size
    // 1 and empty tensors address nothing through them).
    if (!v.IsContiguous()) {
      strides_.assign(v.strides().begin(), v.strides().end());
    } else {
      int64_t s = 1;
      for (int64_t i = d - 1; i >= 0; --i) {
        strides_[static_cast<size_t>(i)] = s;
        s *= sizes_[static_cast<size_t>(i)];
      }
    }
  }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t size(int64_t i) const { return sizes_.at(static_cast<size_t>(i < 0 ? i + dim() : i)); }
  int64_t stride(int64_t i) const { return strides_.at(static_cast<size_t>(i < 0 ? i + dim() : i)); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes_) n *= s;
    return n;
  }
  void* data_ptr() const { return data_; }
  DLDataType dtype() const { return dtype_; }
  int64_t element_size() const { return (dtype_.bits * dtype_.lanes + 7) / 8; }
  DLDevice device() const { return device_; }
  int device_index() const { return device_.device_id; }
  bool is_cpu() const { return device_.device_type == kDLCPU; }
  bool is_cuda() const { return device_.device_type == kDLCUDA; }
  // Row-major contiguous (dimensions of size 1 may have any stride).
  bool is_contiguous() const {
    int64_t want = 1;
    for (int64_t i = dim() - 1; i >= 0; --i) {
      if (size(i) != 1 && stride(i) != want) return false;
      want *= size(i);
    }
    return true;
  }

 private:
  void* data_;
  DLDataType dtype_;
  DLDevice device_;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
};

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

// "cpu" or "cuda:0", as torch prints devices.
inline std::string device_of(const Tensor& t) {
  if (t.is_cpu()) return "cpu";
  if (t.is_cuda()) return "cuda:" + std::to_string(t.device_index());
  return "device type " + std::to_string(static_cast<int>(t.device().device_type)) + ":" +
         std::to_string(t.device_index());
}

inline DType dtype_of(const Tensor& t, const char* name) {
  const DLDataType d = t.dtype();
  if (d.lanes == 1 && d.code == kDLFloat && d.bits == 32) return DType::F32;
  if (d.lanes == 1 && d.code == kDLFloat && d.bits == 16) return DType::F16;
  if (d.lanes == 1 && d.code == kDLBfloat && d.bits == 16) return DType::BF16;
  TVM_FFI_THROW(TypeError) << name << ": unsupported dtype " << dtype_name(d)
                           << " (expected float32, float16 or bfloat16)";
  TVM_FFI_UNREACHABLE();
}

inline void check_dtype(const Tensor& t, DLDataType want, const char* name) {
  KHUB_FFI_CHECK(same_dtype(t.dtype(), want), TypeError, name, ": expected dtype ", dtype_name(want), ", got ",
                 dtype_name(t.dtype()));
}

inline void check_same_dtype(const Tensor& t, const Tensor& x, const char* op, const char* name) {
  KHUB_FFI_CHECK(same_dtype(t.dtype(), x.dtype()), TypeError, op, ": ", name, " dtype ", dtype_name(t.dtype()),
                 " must equal x dtype ", dtype_name(x.dtype()));
}

inline bool same_device(const Tensor& a, const Tensor& b) {
  return a.device().device_type == b.device().device_type && a.device_index() == b.device_index();
}

inline void check_device(const Tensor& t, const Tensor& x, const char* name) {
  KHUB_FFI_CHECK(same_device(t, x), ValueError, name, ": expected device ", device_of(x),
                 " (same as the input), got ", device_of(t));
}

// The device the exported function serves: `<op>_cpu` takes CPU tensors, `<op>_cuda` CUDA ones.
inline void check_backend(const Tensor& x, Backend backend, const char* op) {
  if (backend == Backend::Cpu)
    KHUB_FFI_CHECK(x.is_cpu(), ValueError, op, "_cpu: expected CPU tensors, got ", device_of(x), " (call ", op,
                   "_cuda for CUDA tensors)");
  else
    KHUB_FFI_CHECK(x.is_cuda(), ValueError, op, "_cuda: expected CUDA tensors, got ", device_of(x), " (call ", op,
                   "_cpu for CPU tensors)");
}

inline void check_last_contiguous(const Tensor& t, const char* name) {
  KHUB_FFI_CHECK(t.dim() >= 1, ValueError, name, ": expected at least 1 dimension, got a scalar");
  KHUB_FFI_CHECK(t.size(-1) <= 1 || t.stride(-1) == 1, ValueError, name,
                 ": last dimension must be contiguous (stride 1), got stride ", t.stride(-1));
}

inline bool same_sizes(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int64_t i = 0; i < a.dim(); ++i)
    if (a.size(i) != b.size(i)) return false;
  return true;
}

// A caller-allocated output: x's device and dtype, shape `like`'s (x's unless given), row-major contiguous
// (the implementations write [rows, n] rows back to back).
inline void check_output(const Tensor& out, const Tensor& x, const char* op, const char* name) {
  check_device(out, x, name);
  KHUB_FFI_CHECK(same_dtype(out.dtype(), x.dtype()), TypeError, op, ": ", name, " dtype ", dtype_name(out.dtype()),
                 " must equal the input dtype ", dtype_name(x.dtype()));
  KHUB_FFI_CHECK(out.is_contiguous(), ValueError, op, ": ", name, " must be contiguous, got strides ",
                 strides_of(out));
}

inline void check_output_shape(const Tensor& out, const Tensor& like, const char* op, const char* name) {
  KHUB_FFI_CHECK(same_sizes(out, like), ValueError, op, ": ", name, " must have shape ", shape_of(like), ", got ",
                 shape_of(out));
}

// Views t as [outer, inner, n] rows (see RowLayout), as stable_glue::row_layout does.
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
    KHUB_FFI_CHECK(t.size(i) == 1 || t.stride(i) == t.stride(i + 1) * t.size(i + 1), ValueError, name,
                   ": leading dimensions cannot be collapsed into one row stride (sizes ", shape_of(t), ", strides ",
                   strides_of(t), ")");
  l.rows = outer * l.inner;
  if (l.inner == 0) l.inner = 1;
  return l;
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// True when every row start of t (and its base) is 16-byte aligned.
inline bool rows_aligned16(const Tensor& t, const RowLayout& l) {
  const int64_t es = t.element_size();
  return aligned16(t.data_ptr()) && (l.stride_outer * es) % 16 == 0 && (l.stride_inner * es) % 16 == 0;
}

// Runs f(row_begin, row_end) over [0, rows) in parts of at least ~64K elements (rows of n) on up to
// hardware_concurrency threads (no torch here, so no intra-op pool to borrow). Results do not depend on
// the split (the kernels' rows are independent).
template <typename F>
void parallel_rows(int64_t rows, int64_t n, const F& f) {
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(n, 1));
  const int64_t hw = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
  const int64_t parts = std::min<int64_t>(hw, (rows + grain - 1) / grain);
  if (parts <= 1) {
    f(0, rows);
    return;
  }
  const int64_t chunk = (rows + parts - 1) / parts;
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(parts - 1));
  for (int64_t p = 1; p < parts; ++p) {
    const int64_t b = p * chunk, e = std::min(rows, b + chunk);
    if (b < e) workers.emplace_back([&f, b, e] { f(b, e); });
  }
  f(0, std::min(rows, chunk));
  for (auto& w : workers) w.join();
}

// The caller's outputs, taken by the kernels' shared code (<name>_args.h): take(i, like, op, name) checks
// output i (0 or 1) against the input it is for (check_output, and like's shape) and returns where to
// write it.
struct CallerOutputs {
  std::optional<Tensor> t[2];
  void* take(int i, const Tensor& like, const char* op, const char* name) {
    check_output(*t[i], like, op, name);
    check_output_shape(*t[i], like, op, name);
    return t[i]->data_ptr();
  }
};

struct CudaGlue;  // tvm_ffi_cuda_glue.h

// The glue as the policy of the kernels' shared checks (arg_checks.h), for the exported function of
// backend B (check_backend). Failures are tvm::ffi::Error of kind ValueError or TypeError, thrown as
// TVM_FFI_THROW throws them; dtypes print as DLPack names them (bfloat16, float32).
template <Backend B>
struct Glue {
  using Tensor = ffi_glue::Tensor;
  using Dtype = DLDataType;
  using Cuda = CudaGlue;
  static constexpr Dtype kFloat32 = ffi_glue::kFloat32;
  static constexpr Dtype kInt32 = ffi_glue::kInt32;

  template <typename... Parts>
  [[noreturn]] static void fail_value(const CheckSite& site, const Parts&... parts) {
    fail("ValueError", site, parts...);
  }
  template <typename... Parts>
  [[noreturn]] static void fail_type(const CheckSite& site, const Parts&... parts) {
    fail("TypeError", site, parts...);
  }

  static std::string dtype_name(const Tensor& t) { return ffi_glue::dtype_name(t.dtype()); }
  static bool same_dtype(const Tensor& a, const Tensor& b) { return ffi_glue::same_dtype(a.dtype(), b.dtype()); }
  static bool is_float32(const Tensor& t) { return ffi_glue::same_dtype(t.dtype(), kFloat32); }
  static std::string shape(const Tensor& t) { return shape_of(t); }
  // What a failed rank check says it got, in the stable build's words.
  static std::string rank_found(const Tensor& t) {
    return "a tensor of " + std::to_string(t.dim()) + " dimensions";
  }
  static bool same_sizes(const Tensor& a, const Tensor& b) { return ffi_glue::same_sizes(a, b); }

  static void check_backend(const Tensor& x, const char* op) { ffi_glue::check_backend(x, B, op); }
  static DType dtype_of(const Tensor& t, const char* name) { return ffi_glue::dtype_of(t, name); }
  static void check_dtype(const Tensor& t, Dtype want, const char* name) { ffi_glue::check_dtype(t, want, name); }
  static void check_device(const Tensor& t, const Tensor& x, const char* name) { ffi_glue::check_device(t, x, name); }
  static void check_last_contiguous(const Tensor& t, const char* name) { ffi_glue::check_last_contiguous(t, name); }
  static RowLayout row_layout(const Tensor& t, const char* name) { return ffi_glue::row_layout(t, name); }
  static bool rows_aligned16(const Tensor& t, const RowLayout& l) { return ffi_glue::rows_aligned16(t, l); }
  static bool aligned16(const void* p) { return ffi_glue::aligned16(p); }
  template <typename F>
  static void parallel_rows(int64_t rows, int64_t n, const F& f) {
    ffi_glue::parallel_rows(rows, n, f);
  }

 private:
  template <typename... Parts>
  [[noreturn]] static void fail(const char* kind, const CheckSite& site, const Parts&... parts) {
    ::tvm::ffi::detail::ErrorBuilder(kind, TVMFFIBacktrace(site.file, static_cast<int>(site.line), site.func, 0),
                                     TVM_FFI_ALWAYS_LOG_BEFORE_THROW)
            .stream()
        << cat(parts...);
    TVM_FFI_UNREACHABLE();
  }
};

}  // namespace khub_kernels::ffi_glue
