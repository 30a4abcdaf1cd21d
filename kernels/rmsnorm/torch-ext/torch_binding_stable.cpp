// Stable-ABI binding of the rmsnorm kernel (torch-stable-abi<MM> variants): the ops of
// torch_binding.cpp on torch::stable::Tensor, over the same torch-free CPU implementation and CUDA
// launcher. Kernels are registered boxed; failed checks throw std::runtime_error.
#include <optional>
#include <string_view>
#include <tuple>

#include "op_schemas.h"
#include "khub_kernels/stable_glue.h"
#include "khub_kernels/stable_register.h"
#include "rmsnorm.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/stable_cuda_glue.h"
#include "rmsnorm_launch.h"
#endif

namespace khub_kernels::rmsnorm {
namespace {

using namespace khub_kernels::stable_glue;
using OptTensor = std::optional<Tensor>;

Rounding parse_rounding(std::string_view s) {
  if (s == "fused") return Rounding::Fused;
  if (s == "qwen3") return Rounding::Qwen3;
  if (s == "diffusers") return Rounding::Diffusers;
  STD_TORCH_CHECK(false, "rms_norm: unknown rounding convention '", s, "' (expected fused, qwen3 or diffusers)");
}

// rms_norm of x (after the fused add when residual is given; the sum goes to *sum_out).
Tensor run(const char* op, const Tensor& x, const Tensor* residual, const OptTensor& weight, double eps,
           Rounding rounding, OptTensor* sum_out = nullptr) {
  check_backend(x, op);
  RmsNormArgs a;
  a.dtype = dtype_of(x, "x");
  a.x = x.data_ptr();
  // A row is only its position in x and out: one block of rows where the strides allow it.
  a.x_layout = as_one_block(row_layout(x, "x"));
  a.n = x.size(-1);
  a.eps = static_cast<float>(eps);
  a.rounding = rounding;
  STD_TORCH_CHECK(eps >= 0.0, op, ": eps must be >= 0, got ", eps);
  if (residual) {
    check_device(*residual, x, "residual");
    STD_TORCH_CHECK(residual->scalar_type() == x.scalar_type(), op, ": residual dtype ", residual->scalar_type(),
                    " must equal x dtype ", x.scalar_type());
    STD_TORCH_CHECK(same_sizes(*residual, x), op, ": residual shape ", shape_of(*residual), " must equal x shape ",
                    shape_of(x));
    a.residual = residual->data_ptr();
    a.residual_layout = as_one_block(row_layout(*residual, "residual"));
  }
  a.weight_dtype = a.dtype;
  if (weight) {
    const Tensor& w = *weight;
    check_device(w, x, "weight");
    STD_TORCH_CHECK(w.dim() == 1 && w.size(0) == a.n, op, ": weight must have shape [", a.n, "], got ", shape_of(w));
    STD_TORCH_CHECK(w.scalar_type() == x.scalar_type() || w.scalar_type() == ScalarType::Float, op, ": weight dtype ",
                    w.scalar_type(), " must equal x dtype ", x.scalar_type(), " or be float32");
    check_last_contiguous(w, "weight");
    a.weight = w.data_ptr();
    a.weight_dtype = dtype_of(w, "weight");
  }
  Tensor out = empty_output_like(x);
  a.out = out.data_ptr();
  if (residual) {
    *sum_out = empty_output_like(x);
    a.residual_out = (*sum_out)->data_ptr();
  }
  if (out.numel() == 0) return out;
  if (x.is_cpu()) {
    parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { rms_norm_cpu(a, b, e); });
    return out;
  }
#ifdef KHUB_KERNEL_CUDA
  const torch::stable::accelerator::DeviceGuard guard(x.get_device_index());
  const int64_t vec = 16 / static_cast<int64_t>(x.element_size());
  bool vector_ok = a.n % vec == 0 && rows_aligned16(x, a.x_layout);
  if (residual) vector_ok = vector_ok && rows_aligned16(*residual, a.residual_layout);
  if (weight) vector_ok = vector_ok && aligned16(a.weight);
  check_launch(launch_rms_norm(a, vector_ok, current_stream(x)), op);
  return out;
#else
  STD_TORCH_CHECK(false, op, ": this is a CPU build; no CUDA implementation");
#endif
}

Tensor rms_norm(const Tensor& x, const OptTensor& weight, double eps) {
  return run("rms_norm", x, nullptr, weight, eps, Rounding::Fused);
}

Tensor rms_norm_rounding(const Tensor& x, const OptTensor& weight, double eps, std::string_view rounding) {
  return run("rms_norm_rounding", x, nullptr, weight, eps, parse_rounding(rounding));
}

std::tuple<Tensor, Tensor> fused_add_rms_norm(const Tensor& x, const Tensor& residual, const OptTensor& weight,
                                              double eps) {
  OptTensor sum;
  Tensor normed = run("fused_add_rms_norm", x, &residual, weight, eps, Rounding::Fused, &sum);
  return {normed, *sum};
}

// Meta: the outputs' metadata without running a kernel, after the checks that need no data.
Tensor rms_norm_meta(const Tensor& x, const OptTensor&, double) {
  dtype_of(x, "x");
  return empty_output_like(x);
}

Tensor rms_norm_rounding_meta(const Tensor& x, const OptTensor& weight, double eps, std::string_view rounding) {
  parse_rounding(rounding);
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
