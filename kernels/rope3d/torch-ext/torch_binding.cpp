// Torch binding of the rope3d kernel (LTX-Video 3D RoPE): API mode (fp32 cos/sin), table mode
// (per-axis tables + per-token indices), coordinate mode (per-token coordinates + frequencies),
// fused RMSNorm + table RoPE, and the table builder. CPU implementation in every variant, CUDA
// launcher in cuda variants.
#include <ATen/TensorOperators.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linspace.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/sin.h>

#include <cmath>
#include <cstdint>
#include <tuple>

#include "op_schemas.h"
#include "khub_kernels/torch_glue.h"
#include "khub_kernels/torch_register.h"
#include "rope3d_args.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/torch_cuda_glue.h"
#endif

namespace khub_kernels::rope3d {
namespace {

using namespace khub_kernels::glue;
using Pair = std::tuple<at::Tensor, at::Tensor>;

const at::Tensor* opt(const std::optional<at::Tensor>& t) { return t ? &*t : nullptr; }

Pair both(NewOutputs& o) { return {std::move(o.t[0]), std::move(o.t[1])}; }

at::Tensor apply_rotary_emb(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  NewOutputs o;
  rotate_api<Glue>("apply_rotary_emb", x, nullptr, cos, sin, o);
  return std::move(o.t[0]);
}

Pair apply_rotary_emb_qk(const at::Tensor& q, const at::Tensor& k, const at::Tensor& cos, const at::Tensor& sin) {
  NewOutputs o;
  rotate_api<Glue>("apply_rotary_emb_qk", q, &k, cos, sin, o);
  return both(o);
}

Pair apply_rotary_emb_table_qk(const at::Tensor& q, const at::Tensor& k, const at::Tensor& cos_table,
                               const at::Tensor& sin_table, const at::Tensor& index) {
  NewOutputs o;
  rotate_table<Glue>(q, k, cos_table, sin_table, index, o);
  return both(o);
}

Pair apply_rotary_emb_coords_qk(const at::Tensor& q, const at::Tensor& k, const at::Tensor& coords,
                                const at::Tensor& freqs) {
  NewOutputs o;
  rotate_coords<Glue>(q, k, coords, freqs, o);
  return both(o);
}

Pair rms_norm_rope_table_qk(const at::Tensor& q, const at::Tensor& k, const std::optional<at::Tensor>& q_weight,
                            const std::optional<at::Tensor>& k_weight, double eps, const at::Tensor& cos_table,
                            const at::Tensor& sin_table, const at::Tensor& index) {
  NewOutputs o;
  norm_rotate_table<Glue>(q, k, opt(q_weight), opt(k_weight), eps, cos_table, sin_table, index, o);
  return both(o);
}

// Per-axis tables with diffusers' ops: freqs = theta ** linspace(0, 1, dim // 6) * pi / 2;
// angle[p, k] = freqs[k] * (positions[p] * 2 - 1); returns (cos, sin) [P, dim // 6] in fp32. The
// linspace endpoints are constants (check_table_args says why).
Pair ltx_rope_tables(const at::Tensor& positions, int64_t dim, double theta) {
  check_table_args<Glue>(positions, dim, theta);
  const auto opts = positions.options();
  auto freqs = at::pow(theta, at::linspace(0.0, 1.0, dim / 6, opts));
  freqs = freqs * M_PI / 2.0;
  const auto angles = freqs.unsqueeze(0) * (positions.unsqueeze(1) * 2 - 1);
  return {at::cos(angles), at::sin(angles)};
}

// Meta's checks of q: check_q_rank, then D's evenness on its symbolic size (the real op checks it in
// make_args).
void check_q_shape(const char* op, const at::Tensor& q) {
  check_q_rank<Glue>(op, q);
  TORCH_SYM_CHECK((q.sym_size(2) % 2).sym_eq(0), op, ": D must be even (channel pairs), got ", q.sym_size(2));
}

// Meta: the outputs' metadata without running a kernel (torch.compile's fake tensors, shape
// inference), after the checks that need no data. k's output has q's shape, as run() allocates it.
Pair meta_qk(const char* op, const at::Tensor& q) {
  check_q_shape(op, q);
  return {empty_output_like(q), empty_output_like(q)};
}

at::Tensor apply_rotary_emb_meta(const at::Tensor& x, const at::Tensor&, const at::Tensor&) {
  check_q_shape("apply_rotary_emb", x);
  return empty_output_like(x);
}

Pair apply_rotary_emb_qk_meta(const at::Tensor& q, const at::Tensor&, const at::Tensor&, const at::Tensor&) {
  return meta_qk("apply_rotary_emb_qk", q);
}

Pair apply_rotary_emb_table_qk_meta(const at::Tensor& q, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                    const at::Tensor&) {
  return meta_qk("apply_rotary_emb_table_qk", q);
}

Pair apply_rotary_emb_coords_qk_meta(const at::Tensor& q, const at::Tensor&, const at::Tensor&, const at::Tensor&) {
  return meta_qk("apply_rotary_emb_coords_qk", q);
}

Pair rms_norm_rope_table_qk_meta(const at::Tensor& q, const at::Tensor&, const std::optional<at::Tensor>&,
                                 const std::optional<at::Tensor>&, double, const at::Tensor&, const at::Tensor&,
                                 const at::Tensor&) {
  return meta_qk("rms_norm_rope_table_qk", q);
}

}  // namespace
}  // namespace khub_kernels::rope3d

KHUB_LIBRARY(m) {
  for (const char* schema : khub_kernels::rope3d::kOpSchemas) m.def(schema);
}

#define KHUB_ROPE_IMPLS(m)                                                                   \
  m.impl("apply_rotary_emb", &khub_kernels::rope3d::apply_rotary_emb);                      \
  m.impl("apply_rotary_emb_qk", &khub_kernels::rope3d::apply_rotary_emb_qk);                \
  m.impl("apply_rotary_emb_table_qk", &khub_kernels::rope3d::apply_rotary_emb_table_qk);    \
  m.impl("apply_rotary_emb_coords_qk", &khub_kernels::rope3d::apply_rotary_emb_coords_qk);  \
  m.impl("rms_norm_rope_table_qk", &khub_kernels::rope3d::rms_norm_rope_table_qk);          \
  m.impl("ltx_rope_tables", &khub_kernels::rope3d::ltx_rope_tables)

KHUB_LIBRARY_IMPL(CPU, m) { KHUB_ROPE_IMPLS(m); }

#ifdef KHUB_KERNEL_CUDA
KHUB_LIBRARY_IMPL(CUDA, m) { KHUB_ROPE_IMPLS(m); }
#endif

// ltx_rope_tables is made of ATen ops, which all have Meta kernels: the same function serves.
KHUB_LIBRARY_IMPL(Meta, m) {
  using namespace khub_kernels::rope3d;
  m.impl("apply_rotary_emb", &apply_rotary_emb_meta);
  m.impl("apply_rotary_emb_qk", &apply_rotary_emb_qk_meta);
  m.impl("apply_rotary_emb_table_qk", &apply_rotary_emb_table_qk_meta);
  m.impl("apply_rotary_emb_coords_qk", &apply_rotary_emb_coords_qk_meta);
  m.impl("rms_norm_rope_table_qk", &rms_norm_rope_table_qk_meta);
  m.impl("ltx_rope_tables", &ltx_rope_tables);
}

KHUB_REGISTER_EXTENSION()
