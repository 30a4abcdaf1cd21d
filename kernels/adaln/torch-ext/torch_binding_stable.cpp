// Stable-ABI binding of the adaln kernel (torch-stable-abi<MM> variants): the ops of
// torch_binding.cpp on torch::stable::Tensor, over the same torch-free CPU implementation and CUDA
// launcher. Kernels are registered boxed; failed checks throw std::runtime_error.
#include <tuple>

#include "adaln_args.h"
#include "op_schemas.h"
#include "khub_kernels/stable_glue.h"
#include "khub_kernels/stable_register.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/stable_cuda_glue.h"
#endif

namespace khub_kernels::adaln {
namespace {

using namespace khub_kernels::stable_glue;
using Pair = std::tuple<Tensor, Tensor>;

Pair both(NewOutputs& o) { return {std::move(*o.t[0]), std::move(*o.t[1])}; }

Tensor adaln_rms(const Tensor& x, const Tensor& scale, const Tensor& shift, double eps) {
  NewOutputs o;
  adaln_from_tensors<Glue>(x, scale, shift, eps, o);
  return std::move(*o.t[0]);
}

Tensor adaln_rms_table(const Tensor& x, const Tensor& table, const Tensor& temb, int64_t shift_chunk, double eps) {
  NewOutputs o;
  adaln_from_table<Glue>(x, table, temb, shift_chunk, eps, o);
  return std::move(*o.t[0]);
}

Pair gated_residual_adaln_rms(const Tensor& h, const Tensor& delta, const Tensor& gate, const Tensor& scale,
                              const Tensor& shift, double eps) {
  NewOutputs o;
  gated_adaln_from_tensors<Glue>(h, delta, gate, scale, shift, eps, o);
  return both(o);
}

Pair gated_residual_adaln_rms_table(const Tensor& h, const Tensor& delta, const Tensor& table, const Tensor& temb,
                                    int64_t gate_chunk, int64_t shift_chunk, double eps) {
  NewOutputs o;
  gated_adaln_from_table<Glue>(h, delta, table, temb, gate_chunk, shift_chunk, eps, o);
  return both(o);
}

// Meta: the outputs' metadata without running a kernel, after the checks that need no data.
Tensor meta_out(const Tensor& x, const char* op) {
  check_x_shape<Glue>(x, op);
  return empty_output_like(x);
}

Tensor adaln_rms_meta(const Tensor& x, const Tensor&, const Tensor&, double) { return meta_out(x, "adaln_rms"); }

Tensor adaln_rms_table_meta(const Tensor& x, const Tensor&, const Tensor&, int64_t, double) {
  return meta_out(x, "adaln_rms_table");
}

Pair gated_residual_adaln_rms_meta(const Tensor& h, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                   double) {
  return {meta_out(h, "gated_residual_adaln_rms"), empty_output_like(h)};
}

Pair gated_residual_adaln_rms_table_meta(const Tensor& h, const Tensor&, const Tensor&, const Tensor&, int64_t,
                                         int64_t, double) {
  return {meta_out(h, "gated_residual_adaln_rms_table"), empty_output_like(h)};
}

}  // namespace
}  // namespace khub_kernels::adaln

KHUB_STABLE_LIBRARY(m) {
  for (const char* schema : khub_kernels::adaln::kOpSchemas) m.def(schema);
}

#define KHUB_ADALN_IMPLS(m)                                                                                  \
  m.impl("adaln_rms", TORCH_BOX(&khub_kernels::adaln::adaln_rms));                                          \
  m.impl("adaln_rms_table", TORCH_BOX(&khub_kernels::adaln::adaln_rms_table));                              \
  m.impl("gated_residual_adaln_rms", TORCH_BOX(&khub_kernels::adaln::gated_residual_adaln_rms));            \
  m.impl("gated_residual_adaln_rms_table", TORCH_BOX(&khub_kernels::adaln::gated_residual_adaln_rms_table))

KHUB_STABLE_LIBRARY_IMPL(CPU, m) { KHUB_ADALN_IMPLS(m); }

#ifdef KHUB_KERNEL_CUDA
KHUB_STABLE_LIBRARY_IMPL(CUDA, m) { KHUB_ADALN_IMPLS(m); }
#endif

KHUB_STABLE_LIBRARY_IMPL(Meta, m) {
  m.impl("adaln_rms", TORCH_BOX(&khub_kernels::adaln::adaln_rms_meta));
  m.impl("adaln_rms_table", TORCH_BOX(&khub_kernels::adaln::adaln_rms_table_meta));
  m.impl("gated_residual_adaln_rms", TORCH_BOX(&khub_kernels::adaln::gated_residual_adaln_rms_meta));
  m.impl("gated_residual_adaln_rms_table", TORCH_BOX(&khub_kernels::adaln::gated_residual_adaln_rms_table_meta));
}

KHUB_REGISTER_EXTENSION()
