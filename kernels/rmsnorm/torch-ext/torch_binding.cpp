// Torch binding of the rmsnorm kernel: schemas in namespace TORCH_EXTENSION_NAME, the CPU
// implementation for the CPU key in every variant, the CUDA launcher for the CUDA key in cuda variants.
#include <ATen/ops/empty.h>

#include <string_view>
#include <tuple>

#include "op_schemas.h"
#include "khub_kernels/torch_glue.h"
#include "khub_kernels/torch_register.h"
#include "rmsnorm.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/torch_cuda_glue.h"
#include "rmsnorm_launch.h"
#endif

namespace khub_kernels::rmsnorm {
namespace {

using namespace khub_kernels::glue;

Rounding parse_rounding(std::string_view s) {
  if (s == "fused") return Rounding::Fused;
  if (s == "qwen3") return Rounding::Qwen3;
  if (s == "diffusers") return Rounding::Diffusers;
  TORCH_CHECK(false, "rms_norm: unknown rounding convention '", s, "' (expected fused, qwen3 or diffusers)");
}

std::tuple<at::Tensor, at::Tensor> run(const char* op, const at::Tensor& x, const at::Tensor* residual,
                                       const std::optional<at::Tensor>& weight, double eps, Rounding rounding) {
  check_backend(x, op);
  RmsNormArgs a;
  a.dtype = dtype_of(x, "x");
  a.x = x.data_ptr();
  // A row is only its position in x and out: one block of rows where the strides allow it.
  a.x_layout = as_one_block(row_layout(x, "x"));
  a.n = x.size(-1);
  a.eps = static_cast<float>(eps);
  a.rounding = rounding;
  TORCH_CHECK(eps >= 0.0, op, ": eps must be >= 0, got ", eps);
  if (residual) {
    check_device(*residual, x, "residual");
    TORCH_CHECK(residual->scalar_type() == x.scalar_type(), op, ": residual dtype ", residual->scalar_type(),
                " must equal x dtype ", x.scalar_type());
    TORCH_CHECK(residual->sizes() == x.sizes(), op, ": residual shape ", residual->sizes(), " must equal x shape ",
                x.sizes());
    a.residual = residual->data_ptr();
    a.residual_layout = as_one_block(row_layout(*residual, "residual"));
  }
  a.weight_dtype = a.dtype;
  if (weight) {
    const at::Tensor& w = *weight;
    check_device(w, x, "weight");
    TORCH_CHECK(w.dim() == 1 && w.size(0) == a.n, op, ": weight must have shape [", a.n, "], got ", w.sizes());
    TORCH_CHECK(w.scalar_type() == x.scalar_type() || w.scalar_type() == at::kFloat, op, ": weight dtype ",
                w.scalar_type(), " must equal x dtype ", x.scalar_type(), " or be float32");
    check_last_contiguous(w, "weight");
    a.weight = w.data_ptr();
    a.weight_dtype = dtype_of(w, "weight");
  }
  at::Tensor out = empty_output_like(x);
  at::Tensor res_out = residual ? empty_output_like(x) : at::Tensor();
  a.out = out.data_ptr();
  a.residual_out = residual ? res_out.data_ptr() : nullptr;
  if (out.numel() == 0) return {out, res_out};
  if (x.is_cpu()) {
    parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { rms_norm_cpu(a, b, e); });
    return {out, res_out};
  }
#ifdef KHUB_KERNEL_CUDA
  const c10::cuda::CUDAGuard guard(x.device());
  const int64_t vec = 16 / x.element_size();
  bool vector_ok = a.n % vec == 0 && rows_aligned16(x, a.x_layout);
  if (residual) vector_ok = vector_ok && rows_aligned16(*residual, a.residual_layout);
  if (weight) vector_ok = vector_ok && aligned16(a.weight);
  check_launch(launch_rms_norm(a, vector_ok, current_stream(x)), op);
  return {out, res_out};
#else
  TORCH_CHECK(false, op, ": this is a CPU build; no CUDA implementation");
#endif
}

at::Tensor rms_norm(const at::Tensor& x, const std::optional<at::Tensor>& weight, double eps) {
  return std::get<0>(run("rms_norm", x, nullptr, weight, eps, Rounding::Fused));
}

at::Tensor rms_norm_rounding(const at::Tensor& x, const std::optional<at::Tensor>& weight, double eps,
                             c10::string_view rounding) {
  return std::get<0>(run("rms_norm_rounding", x, nullptr, weight, eps, parse_rounding(rounding)));
}

std::tuple<at::Tensor, at::Tensor> fused_add_rms_norm(const at::Tensor& x, const at::Tensor& residual,
                                                      const std::optional<at::Tensor>& weight, double eps) {
  return run("fused_add_rms_norm", x, &residual, weight, eps, Rounding::Fused);
}

// Meta: the outputs' metadata without running a kernel (torch.compile's fake tensors, shape
// inference), after the checks that need no data, so a bad dtype or rounding fails while tracing.
at::Tensor rms_norm_meta(const at::Tensor& x, const std::optional<at::Tensor>&, double) {
  dtype_of(x, "x");
  return empty_output_like(x);
}

at::Tensor rms_norm_rounding_meta(const at::Tensor& x, const std::optional<at::Tensor>& weight, double eps,
                                  c10::string_view rounding) {
  parse_rounding(rounding);
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
