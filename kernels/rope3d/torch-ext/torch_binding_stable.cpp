// Stable-ABI binding of the rope3d kernel (torch-stable-abi<MM> variants): the ops of
// torch_binding.cpp on torch::stable::Tensor, over the same torch-free CPU implementation and CUDA
// launcher. Kernels are registered boxed; failed checks throw std::runtime_error.
#include <cmath>
#include <cstdint>
#include <optional>
#include <tuple>

#include "op_schemas.h"
#include "khub_kernels/stable_glue.h"
#include "khub_kernels/stable_register.h"
#include "rope3d_args.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/stable_cuda_glue.h"
#endif

namespace khub_kernels::rope3d {
namespace {

using namespace khub_kernels::stable_glue;
using Pair = std::tuple<Tensor, Tensor>;
using OptTensor = std::optional<Tensor>;

const Tensor* opt(const OptTensor& t) { return t ? &*t : nullptr; }

Pair both(NewOutputs& o) { return {std::move(*o.t[0]), std::move(*o.t[1])}; }

Tensor apply_rotary_emb(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  NewOutputs o;
  rotate_api<Glue>("apply_rotary_emb", x, nullptr, cos, sin, o);
  return std::move(*o.t[0]);
}

Pair apply_rotary_emb_qk(const Tensor& q, const Tensor& k, const Tensor& cos, const Tensor& sin) {
  NewOutputs o;
  rotate_api<Glue>("apply_rotary_emb_qk", q, &k, cos, sin, o);
  return both(o);
}

Pair apply_rotary_emb_table_qk(const Tensor& q, const Tensor& k, const Tensor& cos_table, const Tensor& sin_table,
                               const Tensor& index) {
  NewOutputs o;
  rotate_table<Glue>(q, k, cos_table, sin_table, index, o);
  return both(o);
}

Pair apply_rotary_emb_coords_qk(const Tensor& q, const Tensor& k, const Tensor& coords, const Tensor& freqs) {
  NewOutputs o;
  rotate_coords<Glue>(q, k, coords, freqs, o);
  return both(o);
}

Pair rms_norm_rope_table_qk(const Tensor& q, const Tensor& k, const OptTensor& q_weight, const OptTensor& k_weight,
                            double eps, const Tensor& cos_table, const Tensor& sin_table, const Tensor& index) {
  NewOutputs o;
  norm_rotate_table<Glue>(q, k, opt(q_weight), opt(k_weight), eps, cos_table, sin_table, index, o);
  return both(o);
}

// A 0-dim fp32 tensor holding v, on the CPU (where ATen's binary ops read it as a scalar, as they do
// the Python numbers of diffusers' formula) or on `device`.
Tensor scalar(double v, std::optional<torch::stable::Device> device = std::nullopt) {
  return torch::stable::full({}, v, ScalarType::Float, std::nullopt, device);
}

// Per-axis tables with diffusers' ops, as torch_binding.cpp builds them: freqs = theta ** linspace(0,
// 1, dim // 6) * pi / 2; angle[p, k] = freqs[k] * (positions[p] * 2 - 1); (cos, sin) [P, dim // 6] fp32.
// The stable ABI passes no Scalar arguments, so each Python number is a 0-dim tensor operand, which
// ATen's kernels treat as the scalar it wraps (the same values).
Pair ltx_rope_tables(const Tensor& positions, int64_t dim, double theta) {
  check_table_args<Glue>(positions, dim, theta);
  const auto device = positions.device();
  const Tensor steps = call_aten("aten::linspace", "Tensor_Tensor", scalar(0.0), scalar(1.0), dim / 6,
                                 std::optional(ScalarType::Float), std::nullopt, std::optional(device), std::nullopt);
  Tensor freqs = call_aten("aten::pow", "Tensor_Tensor", scalar(theta, device), steps);
  freqs = call_aten("aten::mul", "Tensor", freqs, scalar(M_PI));
  freqs = call_aten("aten::div", "Tensor", freqs, scalar(2.0));
  Tensor centred = call_aten("aten::mul", "Tensor", torch::stable::unsqueeze(positions, 1), scalar(2.0));
  centred = torch::stable::subtract(centred, scalar(1.0));
  const Tensor angles = call_aten("aten::mul", "Tensor", torch::stable::unsqueeze(freqs, 0), centred);
  return {call_aten("aten::cos", "", angles), call_aten("aten::sin", "", angles)};
}

// Meta: [P, dim // 6] fp32 from a broadcast of positions against dim // 6 columns (P stays symbolic).
Pair ltx_rope_tables_meta(const Tensor& positions, int64_t dim, double theta) {
  check_table_args<Glue>(positions, dim, theta);
  const int64_t f = dim / 6;
  const Tensor columns = torch::stable::empty({f}, ScalarType::Float, std::nullopt, positions.device());
  const Tensor shaped = call_aten("aten::mul", "Tensor", torch::stable::unsqueeze(positions, 1),
                                  torch::stable::unsqueeze(columns, 0));
  return {empty_output_like(shaped), empty_output_like(shaped)};
}

// Meta: the outputs' metadata without running a kernel, after the checks that need no data. k's
// output has q's shape, as run() allocates it.
Pair meta_qk(const char* op, const Tensor& q) {
  check_q_rank<Glue>(op, q);
  return {empty_output_like(q), empty_output_like(q)};
}

Tensor apply_rotary_emb_meta(const Tensor& x, const Tensor&, const Tensor&) {
  check_q_rank<Glue>("apply_rotary_emb", x);
  return empty_output_like(x);
}

Pair apply_rotary_emb_qk_meta(const Tensor& q, const Tensor&, const Tensor&, const Tensor&) {
  return meta_qk("apply_rotary_emb_qk", q);
}

Pair apply_rotary_emb_table_qk_meta(const Tensor& q, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  return meta_qk("apply_rotary_emb_table_qk", q);
}

Pair apply_rotary_emb_coords_qk_meta(const Tensor& q, const Tensor&, const Tensor&, const Tensor&) {
  return meta_qk("apply_rotary_emb_coords_qk", q);
}

Pair rms_norm_rope_table_qk_meta(const Tensor& q, const Tensor&, const OptTensor&, const OptTensor&, double,
                                 const Tensor&, const Tensor&, const Tensor&) {
  return meta_qk("rms_norm_rope_table_qk", q);
}

}  // namespace
}  // namespace khub_kernels::rope3d

KHUB_STABLE_LIBRARY(m) {
  for (const char* schema : khub_kernels::rope3d::kOpSchemas) m.def(schema);
}

#define KHUB_ROPE_IMPLS(m)                                                                              \
  m.impl("apply_rotary_emb", TORCH_BOX(&khub_kernels::rope3d::apply_rotary_emb));                      \
  m.impl("apply_rotary_emb_qk", TORCH_BOX(&khub_kernels::rope3d::apply_rotary_emb_qk));                \
  m.impl("apply_rotary_emb_table_qk", TORCH_BOX(&khub_kernels::rope3d::apply_rotary_emb_table_qk));    \
  m.impl("apply_rotary_emb_coords_qk", TORCH_BOX(&khub_kernels::rope3d::apply_rotary_emb_coords_qk));  \
  m.impl("rms_norm_rope_table_qk", TORCH_BOX(&khub_kernels::rope3d::rms_norm_rope_table_qk));          \
  m.impl("ltx_rope_tables", TORCH_BOX(&khub_kernels::rope3d::ltx_rope_tables))

KHUB_STABLE_LIBRARY_IMPL(CPU, m) { KHUB_ROPE_IMPLS(m); }

#ifdef KHUB_KERNEL_CUDA
KHUB_STABLE_LIBRARY_IMPL(CUDA, m) { KHUB_ROPE_IMPLS(m); }
#endif

KHUB_STABLE_LIBRARY_IMPL(Meta, m) {
  using namespace khub_kernels::rope3d;
  m.impl("apply_rotary_emb", TORCH_BOX(&apply_rotary_emb_meta));
  m.impl("apply_rotary_emb_qk", TORCH_BOX(&apply_rotary_emb_qk_meta));
  m.impl("apply_rotary_emb_table_qk", TORCH_BOX(&apply_rotary_emb_table_qk_meta));
  m.impl("apply_rotary_emb_coords_qk", TORCH_BOX(&apply_rotary_emb_coords_qk_meta));
  m.impl("rms_norm_rope_table_qk", TORCH_BOX(&rms_norm_rope_table_qk_meta));
  m.impl("ltx_rope_tables", TORCH_BOX(&ltx_rope_tables_meta));
}

KHUB_REGISTER_EXTENSION()
