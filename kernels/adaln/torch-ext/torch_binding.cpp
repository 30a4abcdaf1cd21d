// Torch binding of the adaln kernel: modulation given as tensors or as (table, temb, chunk), plain
// or after the gated residual. CPU implementation in every variant, CUDA launcher in cuda variants.
#include <ATen/ops/empty.h>

#include <tuple>

#include "adaln.h"
#include "op_schemas.h"
#include "khub_kernels/torch_glue.h"
#include "khub_kernels/torch_register.h"
#ifdef KHUB_KERNEL_CUDA
#include "adaln_launch.h"
#include "khub_kernels/torch_cuda_glue.h"
#endif

namespace khub_kernels::adaln {
namespace {

using namespace khub_kernels::glue;

struct Checked {
  ModSource src;
  bool aligned;
};

bool mod_aligned(const ModSource& m, int64_t es) {
  return aligned16(m.base) && (!m.table || aligned16(m.table)) && (m.stride_b * es) % 16 == 0 &&
         (m.stride_s * es) % 16 == 0;
}

// scale / shift / gate given as a tensor [B or 1, S or 1, D].
Checked mod_from_tensor(const at::Tensor& t, const at::Tensor& x, const char* op, const char* name) {
  check_device(t, x, name);
  TORCH_CHECK(t.scalar_type() == x.scalar_type(), op, ": ", name, " dtype ", t.scalar_type(), " must equal x dtype ",
              x.scalar_type());
  TORCH_CHECK(t.dim() == 3 && (t.size(0) == 1 || t.size(0) == x.size(0)) &&
                  (t.size(1) == 1 || t.size(1) == x.size(1)) && t.size(2) == x.size(2),
              op, ": ", name, " must have shape [B or 1, S or 1, D] = [", x.size(0), " or 1, ", x.size(1), " or 1, ",
              x.size(2), "], got ", t.sizes());
  check_last_contiguous(t, name);
  ModSource m;
  m.base = t.data_ptr();
  m.stride_b = t.size(0) == 1 ? 0 : t.stride(0);
  m.stride_s = t.size(1) == 1 ? 0 : t.stride(1);
  return {m, mod_aligned(m, t.element_size())};
}

// chunk c of table [K, D] + temb [B or 1, T, K * D] (T = 1 or S).
Checked mod_from_table(const at::Tensor& table, const at::Tensor& temb, int64_t chunk, const at::Tensor& x,
                       const char* op) {
  check_device(table, x, "table");
  check_device(temb, x, "temb");
  TORCH_CHECK(table.scalar_type() == x.scalar_type() && temb.scalar_type() == x.scalar_type(), op,
              ": table and temb dtypes must equal x dtype ", x.scalar_type(), ", got ", table.scalar_type(), " and ",
              temb.scalar_type());
  const int64_t d = x.size(2);
  TORCH_CHECK(table.dim() == 2 && table.size(1) == d, op, ": table must have shape [K, ", d, "], got ", table.sizes());
  const int64_t k = table.size(0);
  TORCH_CHECK(temb.dim() == 3 && (temb.size(0) == 1 || temb.size(0) == x.size(0)) &&
                  (temb.size(1) == 1 || temb.size(1) == x.size(1)) && temb.size(2) == k * d,
              op, ": temb must have shape [B or 1, 1 or S, K*D] = [", x.size(0), ", 1 or ", x.size(1), ", ", k * d,
              "], got ", temb.sizes());
  TORCH_CHECK(chunk >= 0 && chunk < k, op, ": chunk ", chunk, " out of range for a table of ", k, " rows");
  check_last_contiguous(table, "table");
  check_last_contiguous(temb, "temb");
  const int64_t es = x.element_size();
  ModSource m;
  m.table = static_cast<const char*>(table.data_ptr()) + chunk * table.stride(0) * es;
  m.base = static_cast<const char*>(temb.data_ptr()) + chunk * d * es;
  m.stride_b = temb.size(0) == 1 ? 0 : temb.stride(0);
  m.stride_s = temb.size(1) == 1 ? 0 : temb.stride(1);
  return {m, mod_aligned(m, es)};
}

std::tuple<at::Tensor, at::Tensor> run(const char* op, const at::Tensor& x, const at::Tensor* delta,
                                       const Checked* gate, const Checked& scale, const Checked& shift, double eps) {
  AdaLnArgs a;
  a.dtype = dtype_of(x, "x");
  a.x = x.data_ptr();
  a.x_layout = row_layout(x, "x");
  a.n = x.size(2);
  a.eps = static_cast<float>(eps);
  a.scale = scale.src;
  a.shift = shift.src;
  bool vector_ok = scale.aligned && shift.aligned && rows_aligned16(x, a.x_layout);
  TORCH_CHECK(eps >= 0.0, op, ": eps must be >= 0, got ", eps);
  if (delta) {
    check_device(*delta, x, "delta");
    TORCH_CHECK(delta->scalar_type() == x.scalar_type() && delta->sizes() == x.sizes(), op,
                ": delta must match h in dtype and shape (", x.scalar_type(), " ", x.sizes(), "), got ",
                delta->scalar_type(), " ", delta->sizes());
    a.delta = delta->data_ptr();
    a.delta_layout = row_layout(*delta, "delta");
    a.gate = gate->src;
    vector_ok = vector_ok && gate->aligned && rows_aligned16(*delta, a.delta_layout);
  }
  at::Tensor out = empty_output_like(x);
  at::Tensor h_out = delta ? empty_output_like(x) : at::Tensor();
  a.out = out.data_ptr();
  a.h_out = delta ? h_out.data_ptr() : nullptr;
  if (out.numel() == 0) return {out, h_out};
  if (x.is_cpu()) {
    parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { adaln_cpu(a, b, e); });
    return {out, h_out};
  }
#ifdef KHUB_KERNEL_CUDA
  const c10::cuda::CUDAGuard guard(x.device());
  vector_ok = vector_ok && a.n % (16 / x.element_size()) == 0;
  check_launch(launch_adaln(a, vector_ok, current_stream(x)), op);
  return {out, h_out};
#else
  TORCH_CHECK(false, op, ": this is a CPU build; no CUDA implementation");
#endif
}

// x (or h) must be [B, S, D] in a supported dtype: the checks that need no data, which the Meta
// registrations run too.
void check_x_shape(const at::Tensor& x, const char* op) {
  TORCH_CHECK(x.dim() == 3, op, ": x must have shape [B, S, D], got ", x.sym_sizes());
  dtype_of(x, "x");
}

void check_x(const at::Tensor& x, const char* op) {
  check_backend(x, op);
  check_x_shape(x, op);
}

at::Tensor adaln_rms(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& shift, double eps) {
  const char* op = "adaln_rms";
  check_x(x, op);
  return std::get<0>(run(op, x, nullptr, nullptr, mod_from_tensor(scale, x, op, "scale"),
                         mod_from_tensor(shift, x, op, "shift"), eps));
}

at::Tensor adaln_rms_table(const at::Tensor& x, const at::Tensor& table, const at::Tensor& temb, int64_t shift_chunk,
                           double eps) {
  const char* op = "adaln_rms_table";
  check_x(x, op);
  return std::get<0>(run(op, x, nullptr, nullptr, mod_from_table(table, temb, shift_chunk + 1, x, op),
                         mod_from_table(table, temb, shift_chunk, x, op), eps));
}

std::tuple<at::Tensor, at::Tensor> gated_residual_adaln_rms(const at::Tensor& h, const at::Tensor& delta,
                                                            const at::Tensor& gate, const at::Tensor& scale,
                                                            const at::Tensor& shift, double eps) {
  const char* op = "gated_residual_adaln_rms";
  check_x(h, op);
  const Checked g = mod_from_tensor(gate, h, op, "gate");
  return run(op, h, &delta, &g, mod_from_tensor(scale, h, op, "scale"), mod_from_tensor(shift, h, op, "shift"), eps);
}

std::tuple<at::Tensor, at::Tensor> gated_residual_adaln_rms_table(const at::Tensor& h, const at::Tensor& delta,
                                                                  const at::Tensor& table, const at::Tensor& temb,
                                                                  int64_t gate_chunk, int64_t shift_chunk, double eps) {
  const char* op = "gated_residual_adaln_rms_table";
  check_x(h, op);
  const Checked g = mod_from_table(table, temb, gate_chunk, h, op);
  return run(op, h, &delta, &g, mod_from_table(table, temb, shift_chunk + 1, h, op),
             mod_from_table(table, temb, shift_chunk, h, op), eps);
}

// Meta: the outputs' metadata without running a kernel (torch.compile's fake tensors, shape
// inference), after the checks that need no data.
at::Tensor meta_out(const at::Tensor& x, const char* op) {
  check_x_shape(x, op);
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
