// tvm-ffi binding of the rmsnorm kernel (tvm-ffi<MM> variants): the ops of torch_binding.cpp as C-ABI
// functions over caller-allocated DLPack tensors, on the same torch-free CPU implementation and CUDA
// launcher. Exported as kernel-builder's tvm-ffi template does (TVM_FFI_DLL_EXPORT_TYPED_FUNC,
// `<op>_<backend>`): `<op>_cpu` in every variant, `<op>_cuda` in CUDA variants. Outputs come first.
//   rms_norm_{cpu,cuda}(out, x, weight: Tensor | None, eps: float)
//   rms_norm_rounding_{cpu,cuda}(out, x, weight, eps, rounding: "fused" | "qwen3" | "diffusers")
//   fused_add_rms_norm_{cpu,cuda}(out, residual_out, x, residual, weight, eps)
#include <tvm/ffi/tvm_ffi.h>

#include <string>

#include "khub_kernels/tvm_ffi_glue.h"
#include "rmsnorm_args.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/tvm_ffi_cuda_glue.h"
#endif

namespace khub_kernels::rmsnorm {
namespace {

using namespace khub_kernels::ffi_glue;
using tvm::ffi::Optional;
using tvm::ffi::TensorView;

std::optional<Tensor> optional(const Optional<TensorView>& t) {
  if (!t.has_value()) return std::nullopt;
  return Tensor(*t);
}

const Tensor* opt(const std::optional<Tensor>& t) { return t ? &*t : nullptr; }

template <Backend B>
void rms_norm(TensorView out, TensorView x, Optional<TensorView> weight, double eps) {
  CallerOutputs o{{out}};
  run<Glue<B>>("rms_norm", x, nullptr, opt(optional(weight)), eps, Rounding::Fused, o);
}

template <Backend B>
void rms_norm_rounding(TensorView out, TensorView x, Optional<TensorView> weight, double eps, std::string rounding) {
  CallerOutputs o{{out}};
  run<Glue<B>>("rms_norm_rounding", x, nullptr, opt(optional(weight)), eps, parse_rounding<Glue<B>>(rounding), o);
}

template <Backend B>
void fused_add_rms_norm(TensorView out, TensorView residual_out, TensorView x, TensorView residual,
                        Optional<TensorView> weight, double eps) {
  CallerOutputs o{{out, residual_out}};
  const Tensor r(residual);
  run<Glue<B>>("fused_add_rms_norm", x, &r, opt(optional(weight)), eps, Rounding::Fused, o);
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
