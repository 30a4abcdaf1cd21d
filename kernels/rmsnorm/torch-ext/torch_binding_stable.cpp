// Stable-ABI binding of the rmsnorm kernel (torch-stable-abi<MM> variants): the ops of
// torch_binding.cpp on torch::stable::Tensor, over the same torch-free CPU implementation and CUDA
// launcher. Kernels are registered boxed; failed checks throw std::runtime_error.
#include <optional>
#include <string_view>
#include <tuple>

#include "op_schemas.h"
#include "khub_kernels/stable_glue.h"
#include "khub_kernels/stable_register.h"
#include "rmsnorm_args.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/stable_cuda_glue.h"
#endif

namespace khub_kernels::rmsnorm {
namespace {

using namespace khub_kernels::stable_glue;
using OptTensor = std::optional<Tensor>;

const Tensor* opt(const OptTensor& t) { return t ? &*t : nullptr; }

Tensor rms_norm(const Tensor& x, const OptTensor& weight, double eps) {
  NewOutputs o;
  run<Glue>("rms_norm", x, nullptr, opt(weight), eps, Rounding::Fused, o);
  return std::move(*o.t[0]);
}

Tensor rms_norm_rounding(const Tensor& x, const OptTensor& weight, double eps, std::string_view rounding) {
  NewOutputs o;
  run<Glue>("rms_norm_rounding", x, nullptr, opt(weight), eps, parse_rounding<Glue>(rounding), o);
  return std::move(*o.t[0]);
}

std::tuple<Tensor, Tensor> fused_add_rms_norm(const Tensor& x, const Tensor& residual, const OptTensor& weight,
                                              double eps) {
  NewOutputs o;
  run<Glue>("fused_add_rms_norm", x, &residual, opt(weight), eps, Rounding::Fused, o);
  return {std::move(*o.t[0]), std::move(*o.t[1])};
}

// Meta: the outputs' metadata without running a kernel, after the checks that need no data.
Tensor rms_norm_meta(const Tensor& x, const OptTensor&, double) {
  dtype_of(x, "x");
  return empty_output_like(x);
}

Tensor rms_norm_rounding_meta(const Tensor& x, const OptTensor& weight, double eps, std::string_view rounding) {
  parse_rounding<Glue>(rounding);
  return rms_norm_meta(x, weight, eps);
}

std::tuple<Tensor, Tensor> fused_add_rms_norm_meta(const Tensor& x, const Tensor&, const OptTensor& weight,
                                                   double eps) {
  return {rms_norm_meta(x, weight, eps), empty_output_like(x)};
}

}  // namespace
}  // namespace khub_kernels::rmsnorm

KHUB_STABLE_LIBRARY(m) {
  for (const char* schema : khub_kernels::rmsnorm::kOpSchemas) m.def(schema);
}

#define KHUB_RMSNORM_IMPLS(m)                                                       \
  m.impl("rms_norm", TORCH_BOX(&khub_kernels::rmsnorm::rms_norm));                 \
  m.impl("rms_norm_rounding", TORCH_BOX(&khub_kernels::rmsnorm::rms_norm_rounding)); \
  m.impl("fused_add_rms_norm", TORCH_BOX(&khub_kernels::rmsnorm::fused_add_rms_norm))

KHUB_STABLE_LIBRARY_IMPL(CPU, m) { KHUB_RMSNORM_IMPLS(m); }

#ifdef KHUB_KERNEL_CUDA
KHUB_STABLE_LIBRARY_IMPL(CUDA, m) { KHUB_RMSNORM_IMPLS(m); }
#endif

KHUB_STABLE_LIBRARY_IMPL(Meta, m) {
  m.impl("rms_norm", TORCH_BOX(&khub_kernels::rmsnorm::rms_norm_meta));
  m.impl("rms_norm_rounding", TORCH_BOX(&khub_kernels::rmsnorm::rms_norm_rounding_meta));
  m.impl("fused_add_rms_norm", TORCH_BOX(&khub_kernels::rmsnorm::fused_add_rms_norm_meta));
}

KHUB_REGISTER_EXTENSION()
