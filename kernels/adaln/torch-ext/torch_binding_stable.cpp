// Stable-ABI binding of the adaln kernel (torch-stable-abi<MM> variants): the ops of
// torch_binding.cpp on torch::stable::Tensor, over the same torch-free CPU implementation and CUDA
// launcher. Kernels are registered boxed; failed checks throw std::runtime_error.
#include <optional>
#include <tuple>

#include "adaln.h"
#include "op_schemas.h"
#include "khub_kernels/stable_glue.h"
#include "khub_kernels/stable_register.h"
#ifdef KHUB_KERNEL_CUDA
#include "adaln_launch.h"
#include "khub_kernels/stable_cuda_glue.h"
#endif

namespace khub_kernels::adaln {
namespace {

using namespace khub_kernels::stable_glue;
using Pair = std::tuple<Tensor, Tensor>;

struct Checked {
  ModSource src;
  bool aligned;
};

bool mod_aligned(const ModSource& m, int64_t es) {
  return aligned16(m.base) && (!m.table || aligned16(m.table)) && (m.stride_b * es) % 16 == 0 &&
         (m.stride_s * es) % 16 == 0;
}

int64_t elem_size(const Tensor& t) { return static_cast<int64_t>(t.element_size()); }

// scale / shift / gate given as a tensor [B or 1, S or 1, D].
Checked mod_from_tensor(const Tensor& t, const Tensor& x, const char* op, const char* name) {
  check_device(t, x, name);
  STD_TORCH_CHECK(t.scalar_type() == x.scalar_type(), op, ": ", name, " dtype ", t.scalar_type(),
                  " must equal x dtype ", x.scalar_type());
  STD_TORCH_CHECK(t.dim() == 3 && (t.size(0) == 1 || t.size(0) == x.size(0)) &&
                      (t.size(1) == 1 || t.size(1) == x.size(1)) && t.size(2) == x.size(2),
                  op, ": ", name, " must have shape [B or 1, S or 1, D] = [", x.size(0), " or 1, ", x.size(1),
                  " or 1, ", x.size(2), "], got ", shape_of(t));
  check_last_contiguous(t, name);
  ModSource m;
  m.base = t.data_ptr();
  m.stride_b = t.size(0) == 1 ? 0 : t.stride(0);
  m.stride_s = t.size(1) == 1 ? 0 : t.stride(1);
  return {m, mod_aligned(m, elem_size(t))};
}

// chunk c of table [K, D] + temb [B or 1, T, K * D] (T = 1 or S).
Checked mod_from_table(const Tensor& table, const Tensor& temb, int64_t chunk, const Tensor& x, const char* op) {
  check_device(table, x, "table");
  check_device(temb, x, "temb");
  STD_TORCH_CHECK(table.scalar_type() == x.scalar_type() && temb.scalar_type() == x.scalar_type(), op,
                  ": table and temb dtypes must equal x dtype ", x.scalar_type(), ", got ", table.scalar_type(),
                  " and ", temb.scalar_type());
  const int64_t d = x.size(2);
  STD_TORCH_CHECK(table.dim() == 2 && table.size(1) == d, op, ": table must have shape [K, ", d, "], got ",
                  shape_of(table));
  const int64_t k = table.size(0);
  STD_TORCH_CHECK(temb.dim() == 3 && (temb.size(0) == 1 || temb.size(0) == x.size(0)) &&
                      (temb.size(1) == 1 || temb.size(1) == x.size(1)) && temb.size(2) == k * d,
                  op, ": temb must have shape [B or 1, 1 or S, K*D] = [", x.size(0), ", 1 or ", x.size(1), ", ",
                  k * d, "], got ", shape_of(temb));
  STD_TORCH_CHECK(chunk >= 0 && chunk < k, op, ": chunk ", chunk, " out of range for a table of ", k, " rows");
  check_last_contiguous(table, "table");
  check_last_contiguous(temb, "temb");
  const int64_t es = elem_size(x);
  ModSource m;
  m.table = static_cast<const char*>(table.data_ptr()) + chunk * table.stride(0) * es;
  m.base = static_cast<const char*>(temb.data_ptr()) + chunk * d * es;
  m.stride_b = temb.size(0) == 1 ? 0 : temb.stride(0);
  m.stride_s = temb.size(1) == 1 ? 0 : temb.stride(1);
  return {m, mod_aligned(m, es)};
}

// adaln of x (after the gated residual when delta is given; h_new goes to *h_out).
Tensor run(const char* op, const Tensor& x, const Tensor* delta, const Checked* gate, const Checked& scale,
           const Checked& shift, double eps, std::optional<Tensor>* h_out = nullptr) {
  AdaLnArgs a;
  a.dtype = dtype_of(x, "x");
  a.x = x.data_ptr();
  a.x_layout = row_layout(x, "x");
  a.n = x.size(2);
  a.eps = static_cast<float>(eps);
  a.scale = scale.src;
  a.shift = shift.src;
  bool vector_ok = scale.aligned && shift.aligned && rows_aligned16(x, a.x_layout);
  STD_TORCH_CHECK(eps >= 0.0, op, ": eps must be >= 0, got ", eps);
  if (delta) {
    check_device(*delta, x, "delta");
    STD_TORCH_CHECK(delta->scalar_type() == x.scalar_type() && same_sizes(*delta, x), op,
                    ": delta must match h in dtype and shape (", x.scalar_type(), " ", shape_of(x), "), got ",
                    delta->scalar_type(), " ", shape_of(*delta));
    a.delta = delta->data_ptr();
    a.delta_layout = row_layout(*delta, "delta");
    a.gate = gate->src;
    vector_ok = vector_ok && gate->aligned && rows_aligned16(*delta, a.delta_layout);
  }
  Tensor out = empty_output_like(x);
  a.out = out.data_ptr();
  if (delta) {
    *h_out = empty_output_like(x);
    a.h_out = (*h_out)->data_ptr();
  }
  if (out.numel() == 0) return out;
  if (x.is_cpu()) {
    parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { adaln_cpu(a, b, e); });
    return out;
  }
#ifdef KHUB_KERNEL_CUDA
  const torch::stable::accelerator::DeviceGuard guard(x.get_device_index());
  vector_ok = vector_ok && a.n % (16 / elem_size(x)) == 0;
  check_launch(launch_adaln(a, vector_ok, current_stream(x)), op);
  return out;
#else
  STD_TORCH_CHECK(false, op, ": this is a CPU build; no CUDA implementation");
#endif
}

// x (or h) must be [B, S, D] in a supported dtype: the checks that need no data, which the Meta
// registrations run too.
void check_x_shape(const Tensor& x, const char* op) {
  STD_TORCH_CHECK(x.dim() == 3, op, ": x must have shape [B, S, D], got a tensor of ", x.dim(), " dimensions");
  dtype_of(x, "x");
}

void check_x(const Tensor& x, const char* op) {
  check_backend(x, op);
  check_x_shape(x, op);
}

Pair gated(const char* op, const Tensor& h, const Tensor& delta, const Checked& g, const Checked& scale,
           const Checked& shift, double eps) {
  std::optional<Tensor> h_new;
  Tensor out = run(op, h, &delta, &g, scale, shift, eps, &h_new);
  return {out, *h_new};
}

Tensor adaln_rms(const Tensor& x, const Tensor& scale, const Tensor& shift, double eps) {
  const char* op = "adaln_rms";
  check_x(x, op);
  return run(op, x, nullptr, nullptr, mod_from_tensor(scale, x, op, "scale"), mod_from_tensor(shift, x, op, "shift"),
             eps);
}

Tensor adaln_rms_table(const Tensor& x, const Tensor& table, const Tensor& temb, int64_t shift_chunk, double eps) {
  const char* op = "adaln_rms_table";
  check_x(x, op);
  return run(op, x, nullptr, nullptr, mod_from_table(table, temb, shift_chunk + 1, x, op),
             mod_from_table(table, temb, shift_chunk, x, op), eps);
}

Pair gated_residual_adaln_rms(const Tensor& h, const Tensor& delta, const Tensor& gate, const Tensor& scale,
                              const Tensor& shift, double eps) {
  const char* op = "gated_residual_adaln_rms";
  check_x(h, op);
  const Checked g = mod_from_tensor(gate, h, op, "gate");
  return gated(op, h, delta, g, mod_from_tensor(scale, h, op, "scale"), mod_from_tensor(shift, h, op, "shift"), eps);
}

Pair gated_residual_adaln_rms_table(const Tensor& h, const Tensor& delta, const Tensor& table, const Tensor& temb,
                                    int64_t gate_chunk, int64_t shift_chunk, double eps) {
  const char* op = "gated_residual_adaln_rms_table";
  check_x(h, op);
  const Checked g = mod_from_table(table, temb, gate_chunk, h, op);
  return gated(op, h, delta, g, mod_from_table(table, temb, shift_chunk + 1, h, op),
               mod_from_table(table, temb, shift_chunk, h, op), eps);
}

// Meta: the outputs' metadata without running a kernel, after the checks that need no data.
Tensor meta_out(const Tensor& x, const char* op) {
  check_x_shape(x, op);
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
