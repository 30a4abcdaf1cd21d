// tvm-ffi binding of the rmsnorm kernel (tvm-ffi<MM> variants): the ops of torch_binding.cpp as C-ABI
// functions over caller-allocated DLPack tensors, on the same torch-free CPU implementation and CUDA
// launcher. Exported as kernel-builder's tvm-ffi template does (TVM_FFI_DLL_EXPORT_TYPED_FUNC,
// `<op>_<backend>`): `<op>_cpu` in every variant, `<op>_cuda` in CUDA variants. Outputs come first.
//   rms_norm_{cpu,cuda}(out, x, weight: Tensor | None, eps: float)
//   rms_norm_rounding_{cpu,cuda}(out, x, weight, eps, rounding: "fused" | "qwen3" | "diffusers")
//   fused_add_rms_norm_{cpu,cuda}(out, residual_out, x, residual, weight, eps)
#include <tvm/ffi/tvm_ffi.h>

#include <optional>
#include <string>

#include "khub_kernels/tvm_ffi_glue.h"
#include "rmsnorm.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/tvm_ffi_cuda_glue.h"
#include "rmsnorm_launch.h"
#endif

namespace khub_kernels::rmsnorm {
namespace {

using namespace khub_kernels::ffi_glue;
using tvm::ffi::Optional;
using tvm::ffi::TensorView;

Rounding parse_rounding(const std::string& s) {
  if (s == "fused") return Rounding::Fused;
  if (s == "qwen3") return Rounding::Qwen3;
  if (s == "diffusers") return Rounding::Diffusers;
  TVM_FFI_THROW(ValueError) << "rms_norm: unknown rounding convention '" << s
                            << "' (expected fused, qwen3 or diffusers)";
  TVM_FFI_UNREACHABLE();
}

// rms_norm of x into out (after the fused add when residual is given; the sum goes to residual_out).
void run(Backend backend, const char* op, const Tensor& out, const Tensor& x, const Tensor* residual,
         const Tensor* residual_out, const std::optional<Tensor>& weight, double eps, Rounding rounding) {
  check_backend(x, backend, op);
  RmsNormArgs a;
  a.dtype = dtype_of(x, "x");
  a.x = x.data_ptr();
  // A row is only its position in x and out: one block of rows where the strides allow it.
  a.x_layout = as_one_block(row_layout(x, "x"));
  a.n = x.size(-1);
  a.eps = static_cast<float>(eps);
  a.rounding = rounding;
  KHUB_FFI_CHECK(eps >= 0.0, ValueError, op, ": eps must be >= 0, got ", eps);
  check_output(out, x, op, "out");
  check_output_shape(out, x, op, "out");
  a.out = out.data_ptr();
  if (residual) {
    check_device(*residual, x, "residual");
    check_same_dtype(*residual, x, op, "residual");
    KHUB_FFI_CHECK(same_sizes(*residual, x), ValueError, op, ": residual shape ", shape_of(*residual),
                   " must equal x shape ", shape_of(x));
    a.residual = residual->data_ptr();
    a.residual_layout = as_one_block(row_layout(*residual, "residual"));
    check_output(*residual_out, x, op, "residual_out");
    check_output_shape(*residual_out, x, op, "residual_out");
    a.residual_out = residual_out->data_ptr();
  }
  a.weight_dtype = a.dtype;
  if (weight) {
    const Tensor& w = *weight;
    check_device(w, x, "weight");
    KHUB_FFI_CHECK(w.dim() == 1 && w.size(0) == a.n, ValueError, op, ": weight must have shape [", a.n, "], got ",
                   shape_of(w));
    KHUB_FFI_CHECK(same_dtype(w.dtype(), x.dtype()) || same_dtype(w.dtype(), kFloat32), TypeError, op,
                   ": weight dtype ", dtype_name(w.dtype()), " must equal x dtype ", dtype_name(x.dtype()),
                   " or be float32");
    check_last_contiguous(w, "weight");
    a.weight = w.data_ptr();
    a.weight_dtype = dtype_of(w, "weight");
  }
  if (out.numel() == 0) return;
  if (backend == Backend::Cpu) {
    parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { rms_norm_cpu(a, b, e); });
    return;
  }
#ifdef KHUB_KERNEL_CUDA
  const DeviceGuard guard(x.device_index());
  const int64_t vec = 16 / x.element_size();
  bool vector_ok = a.n % vec == 0 && rows_aligned16(x, a.x_layout);
  if (residual) vector_ok = vector_ok && rows_aligned16(*residual, a.residual_layout);
  if (weight) vector_ok = vector_ok && aligned16(a.weight);
  check_launch(launch_rms_norm(a, vector_ok, current_stream(x)), op);
#endif
}

std::optional<Tensor> optional(const Optional<TensorView>& t) {
  if (!t.has_value()) return std::nullopt;
  return Tensor(*t);
}

template <Backend B>
void rms_norm(TensorView out, TensorView x, Optional<TensorView> weight, double eps) {
  run(B, "rms_norm", out, x, nullptr, nullptr, optional(weight), eps, Rounding::Fused);
}

template <Backend B>
void rms_norm_rounding(TensorView out, TensorView x, Optional<TensorView> weight, double eps, std::string rounding) {
  run(B, "rms_norm_rounding", out, x, nullptr, nullptr, optional(weight), eps, parse_rounding(rounding));
}

template <Backend B>
void fused_add_rms_norm(TensorView out, TensorView residual_out, TensorView x, TensorView residual,
                        Optional<TensorView> weight, double eps) {
  const Tensor r(residual), ro(residual_out);
  run(B, "fused_add_rms_norm", out, x, &r, &ro, optional(weight), eps, Rounding::Fused);
}

}  // namespace
}  // namespace khub_kernels::rmsnorm

namespace rms = khub_kernels::rmsnorm;
using khub_kernels::ffi_glue::Backend;

TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_cpu, rms::rms_norm<Backend::Cpu>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_rounding_cpu, rms::rms_norm_rounding<Backend::Cpu>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fused_add_rms_norm_cpu, rms::fused_add_rms_norm<Backend::Cpu>);
#ifdef KHUB_KERNEL_CUDA
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_cuda, rms::rms_norm<Backend::Cuda>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_rounding_cuda, rms::rms_norm_rounding<Backend::Cuda>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fused_add_rms_norm_cuda, rms::fused_add_rms_norm<Backend::Cuda>);
#endif
