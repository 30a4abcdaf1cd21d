// Torch binding of the rmsnorm kernel: schemas in namespace TORCH_EXTENSION_NAME, the CPU
// implementation for the CPU key in every variant, the CUDA launcher for the CUDA key in cuda variants.
#include <ATen/ops/empty.h>

#include <tuple>

#include "op_schemas.h"
#include "khub_kernels/torch_glue.h"
#include "khub_kernels/torch_register.h"
#include "rmsnorm_args.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/torch_cuda_glue.h"
#endif

namespace khub_kernels::rmsnorm {
namespace {

using namespace khub_kernels::glue;

const at::Tensor* opt(const std::optional<at::Tensor>& t) { return t ? &*t : nullptr; }

at::Tensor rms_norm(const at::Tensor& x, const std::optional<at::Tensor>& weight, double eps) {
  NewOutputs o;
  run<Glue>("rms_norm", x, nullptr, opt(weight), eps, Rounding::Fused, o);
  return std::move(o.t[0]);
}

at::Tensor rms_norm_rounding(const at::Tensor& x, const std::optional<at::Tensor>& weight, double eps,
                             c10::string_view rounding) {
  NewOutputs o;
  run<Glue>("rms_norm_rounding", x, nullptr, opt(weight), eps, parse_rounding<Glue>(rounding), o);
  return std::move(o.t[0]);
}

std::tuple<at::Tensor, at::Tensor> fused_add_rms_norm(const at::Tensor& x, const at::Tensor& residual,
                                                      const std::optional<at::Tensor>& weight, double eps) {
  NewOutputs o;
  run<Glue>("fused_add_rms_norm", x, &residual, opt(weight), eps, Rounding::Fused, o);
  return {std::move(o.t[0]), std::move(o.t[1])};
}

// Meta: the outputs' metadata without running a kernel (torch.compile's fake tensors, shape
// inference), after the checks that need no data, so a bad dtype or rounding fails while tracing.
at::Tensor rms_norm_meta(const at::Tensor& x, const std::optional<at::Tensor>&, double) {
  dtype_of(x, "x");
  return empty_output_like(x);
}

at::Tensor rms_norm_rounding_meta(const at::Tensor& x, const std::optional<at::Tensor>& weight, double eps,
                                  c10::string_view rounding) {
  parse_rounding<Glue>(rounding);
  return rms_norm_meta(x, weight, eps);
}

std::tuple<at::Tensor, at::Tensor> fused_add_rms_norm_meta(const at::Tensor& x, const at::Tensor&,
                                                           const std::optional<at::Tensor>& weight, double eps) {
  return {rms_norm_meta(x, weight, eps), empty_output_like(x)};
}

}  // namespace
}  // namespace khub_kernels::rmsnorm

KHUB_LIBRARY(m) {
  for (const char* schema : khub_kernels::rmsnorm::kOpSchemas) m.def(schema);
}

KHUB_LIBRARY_IMPL(CPU, m) {
  using namespace khub_kernels::rmsnorm;
  m.impl("rms_norm", &rms_norm);
  m.impl("rms_norm_rounding", &rms_norm_rounding);
  m.impl("fused_add_rms_norm", &fused_add_rms_norm);
}

#ifdef KHUB_KERNEL_CUDA
KHUB_LIBRARY_IMPL(CUDA, m) {
  using namespace khub_kernels::rmsnorm;
  m.impl("rms_norm", &rms_norm);
  m.impl("rms_norm_rounding", &rms_norm_rounding);
  m.impl("fused_add_rms_norm", &fused_add_rms_norm);
}
#endif

KHUB_LIBRARY_IMPL(Meta, m) {
  using namespace khub_kernels::rmsnorm;
  m.impl("rms_norm", &rms_norm_meta);
  m.impl("rms_norm_rounding", &rms_norm_rounding_meta);
  m.impl("fused_add_rms_norm", &fused_add_rms_norm_meta);
}

KHUB_REGISTER_EXTENSION()
