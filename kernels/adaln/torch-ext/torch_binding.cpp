// Torch binding of the adaln kernel: modulation given as tensors or as (table, temb, chunk), plain
// or after the gated residual. CPU implementation in every variant, CUDA launcher in cuda variants.
#include <ATen/ops/empty.h>

#include <tuple>

#include "adaln_args.h"
#include "op_schemas.h"
#include "khub_kernels/torch_glue.h"
#include "khub_kernels/torch_register.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/torch_cuda_glue.h"
#endif

namespace khub_kernels::adaln {
namespace {

using namespace khub_kernels::glue;
using Pair = std::tuple<at::Tensor, at::Tensor>;

Pair both(NewOutputs& o) { return {std::move(o.t[0]), std::move(o.t[1])}; }

at::Tensor adaln_rms(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& shift, double eps) {
  NewOutputs o;
  adaln_from_tensors<Glue>(x, scale, shift, eps, o);
  return std::move(o.t[0]);
}

at::Tensor adaln_rms_table(const at::Tensor& x, const at::Tensor& table, const at::Tensor& temb, int64_t shift_chunk,
                           double eps) {
  NewOutputs o;
  adaln_from_table<Glue>(x, table, temb, shift_chunk, eps, o);
  return std::move(o.t[0]);
}

Pair gated_residual_adaln_rms(const at::Tensor& h, const at::Tensor& delta, const at::Tensor& gate,
                              const at::Tensor& scale, const at::Tensor& shift, double eps) {
  NewOutputs o;
  gated_adaln_from_tensors<Glue>(h, delta, gate, scale, shift, eps, o);
  return both(o);
}

Pair gated_residual_adaln_rms_table(const at::Tensor& h, const at::Tensor& delta, const at::Tensor& table,
                                    const at::Tensor& temb, int64_t gate_chunk, int64_t shift_chunk, double eps) {
  NewOutputs o;
  gated_adaln_from_table<Glue>(h, delta, table, temb, gate_chunk, shift_chunk, eps, o);
  return both(o);
}

// Meta: the outputs' metadata without running a kernel (torch.compile's fake tensors, shape
// inference), after the checks that need no data.
at::Tensor meta_out(const at::Tensor& x, const char* op) {
  check_x_shape<Glue>(x, op);
  return empty_output_like(x);
}

at::Tensor adaln_rms_meta(const at::Tensor& x, const at::Tensor&, const at::Tensor&, double) {
  return meta_out(x, "adaln_rms");
}

at::Tensor adaln_rms_table_meta(const at::Tensor& x, const at::Tensor&, const at::Tensor&, int64_t, double) {
  return meta_out(x, "adaln_rms_table");
}

std::tuple<at::Tensor, at::Tensor> gated_residual_adaln_rms_meta(const at::Tensor& h, const at::Tensor&,
                                                                 const at::Tensor&, const at::Tensor&,
                                                                 const at::Tensor&, double) {
  return {meta_out(h, "gated_residual_adaln_rms"), empty_output_like(h)};
}

std::tuple<at::Tensor, at::Tensor> gated_residual_adaln_rms_table_meta(const at::Tensor& h, const at::Tensor&,
                                                                       const at::Tensor&, const at::Tensor&, int64_t,
                                                                       int64_t, double) {
  return {meta_out(h, "gated_residual_adaln_rms_table"), empty_output_like(h)};
}

}  // namespace
}  // namespace khub_kernels::adaln

KHUB_LIBRARY(m) {
  for (const char* schema : khub_kernels::adaln::kOpSchemas) m.def(schema);
}

#define KHUB_ADALN_IMPLS(m)                                                                        \
  m.impl("adaln_rms", &khub_kernels::adaln::adaln_rms);                                           \
  m.impl("adaln_rms_table", &khub_kernels::adaln::adaln_rms_table);                               \
  m.impl("gated_residual_adaln_rms", &khub_kernels::adaln::gated_residual_adaln_rms);             \
  m.impl("gated_residual_adaln_rms_table", &khub_kernels::adaln::gated_residual_adaln_rms_table)

KHUB_LIBRARY_IMPL(CPU, m) { KHUB_ADALN_IMPLS(m); }

#ifdef KHUB_KERNEL_CUDA
KHUB_LIBRARY_IMPL(CUDA, m) { KHUB_ADALN_IMPLS(m); }
#endif

KHUB_LIBRARY_IMPL(Meta, m) {
  m.impl("adaln_rms", &khub_kernels::adaln::adaln_rms_meta);
  m.impl("adaln_rms_table", &khub_kernels::adaln::adaln_rms_table_meta);
  m.impl("gated_residual_adaln_rms", &khub_kernels::adaln::gated_residual_adaln_rms_meta);
  m.impl("gated_residual_adaln_rms_table", &khub_kernels::adaln::gated_residual_adaln_rms_table_meta);
}

KHUB_REGISTER_EXTENSION()
