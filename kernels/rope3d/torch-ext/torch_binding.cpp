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
#include "rope3d.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/torch_cuda_glue.h"
#include "rope3d_launch.h"
#endif

namespace khub_kernels::rope3d {
namespace {

using namespace khub_kernels::glue;
using Pair = std::tuple<at::Tensor, at::Tensor>;

// Per-token side tensor [B or 1, S, width] of dtype want: sets stride_b / stride_s.
void per_token(const at::Tensor& t, const at::Tensor& x, int64_t width, at::ScalarType want, const char* op,
               const char* name, TrigParams& p) {
  check_device(t, x, name);
  check_dtype(t, want, name);
  TORCH_CHECK(t.dim() == 3 && (t.size(0) == 1 || t.size(0) == x.size(0)) && t.size(1) == x.size(1) &&
                  t.size(2) == width,
              op, ": ", name, " must have shape [", x.size(0), " or 1, ", x.size(1), ", ", width, "], got ", t.sizes());
  check_last_contiguous(t, name);
  p.stride_b = t.size(0) == 1 ? 0 : t.stride(0);
  p.stride_s = t.stride(1);
}

// q must be [B, S, D] with D even, in a supported dtype: the checks that need no data, which the
// Meta registrations run too.
void check_q_shape(const char* op, const at::Tensor& q) {
  dtype_of(q, "q");
  TORCH_CHECK(q.dim() == 3, op, ": q must have shape [B, S, D], got ", q.sym_sizes());
  TORCH_SYM_CHECK((q.sym_size(2) % 2).sym_eq(0), op, ": D must be even (channel pairs), got ", q.sym_size(2));
}

RopeArgs make_args(const char* op, const at::Tensor& q, const at::Tensor* k) {
  check_backend(q, op);
  check_q_shape(op, q);
  RopeArgs a;
  a.dtype = dtype_of(q, "q");
  a.d = q.size(2);
  a.q = q.data_ptr();
  a.q_layout = row_layout(q, "q");
  a.trig.seq = std::max<int64_t>(q.size(1), 1);
  a.trig.f = static_cast<int>(a.d / 6);
  a.trig.pad_pairs = static_cast<int>((a.d % 6) / 2);
  if (k) {
    check_device(*k, q, "k");
    TORCH_CHECK(k->scalar_type() == q.scalar_type() && k->sizes() == q.sizes(), op,
                ": k must match q in dtype and shape (", q.scalar_type(), " ", q.sizes(), "), got ", k->scalar_type(),
                " ", k->sizes());
    a.k = k->data_ptr();
    a.k_layout = row_layout(*k, "k");
  }
  return a;
}

void set_table(RopeArgs& a, const char* op, const at::Tensor& q, const at::Tensor& cos_t, const at::Tensor& sin_t,
               const at::Tensor& index) {
  a.trig.mode = TrigMode::Table;
  for (const auto* t : {&cos_t, &sin_t}) {
    check_device(*t, q, "table");
    check_dtype(*t, at::kFloat, "table");
    TORCH_CHECK(t->dim() == 2 && t->size(1) == a.trig.f && t->is_contiguous(), op,
                ": cos/sin tables must be contiguous [P, D/6] = [P, ", a.trig.f, "], got ", t->sizes());
  }
  TORCH_CHECK(cos_t.sizes() == sin_t.sizes(), op, ": cos and sin tables differ in shape");
  TORCH_CHECK(cos_t.numel() <= INT32_MAX, op, ": cos/sin tables must have fewer than 2^31 elements, got ",
              cos_t.numel());  // the kernels index them in 32 bits
  per_token(index, q, 3, at::kInt, op, "index", a.trig);
  if (index.is_cpu() && index.numel() > 0)
    TORCH_CHECK(index.min().item<int32_t>() >= 0 && index.max().item<int32_t>() < cos_t.size(0), op,
                ": index values must lie in [0, ", cos_t.size(0), ")");
  a.trig.cos_table = cos_t.data_ptr<float>();
  a.trig.sin_table = sin_t.data_ptr<float>();
  a.trig.index = index.data_ptr<int32_t>();
}

Pair launch(const char* op, RopeArgs& a, const at::Tensor& q, const at::Tensor* k, bool trig_aligned) {
  at::Tensor qo = empty_output_like(q);
  at::Tensor ko = k ? empty_output_like(q) : at::Tensor();
  a.q_out = qo.data_ptr();
  a.k_out = k ? ko.data_ptr() : nullptr;
  if (qo.numel() == 0) return {qo, ko};
  if (q.is_cpu()) {
    parallel_rows(a.q_layout.rows, a.d, [&](int64_t b, int64_t e) { rope3d_cpu(a, b, e); });
    return {qo, ko};
  }
#ifdef KHUB_KERNEL_CUDA
  const c10::cuda::CUDAGuard guard(q.device());
  bool vector_ok = trig_aligned && a.d % (16 / q.element_size()) == 0 && rows_aligned16(q, a.q_layout);
  if (k) vector_ok = vector_ok && rows_aligned16(*k, a.k_layout);
  if (a.q_weight) vector_ok = vector_ok && aligned16(a.q_weight);
  if (a.k_weight) vector_ok = vector_ok && aligned16(a.k_weight);
  check_launch(launch_rope3d(a, vector_ok, current_stream(q)), op);
  return {qo, ko};
#else
  (void)trig_aligned;
  TORCH_CHECK(false, op, ": this is a CPU build; no CUDA implementation");
#endif
}

Pair api(const char* op, const at::Tensor& q, const at::Tensor* k, const at::Tensor& cos, const at::Tensor& sin) {
  RopeArgs a = make_args(op, q, k);
  per_token(cos, q, a.d, at::kFloat, op, "cos", a.trig);
  TrigParams sin_p;
  per_token(sin, q, a.d, at::kFloat, op, "sin", sin_p);
  TORCH_CHECK(sin_p.stride_b == a.trig.stride_b && sin_p.stride_s == a.trig.stride_s, op,
              ": cos and sin must have the same strides");
  a.trig.mode = TrigMode::Api;
  a.trig.cos = cos.data_ptr<float>();
  a.trig.sin = sin.data_ptr<float>();
  const bool aligned = aligned16(a.trig.cos) && aligned16(a.trig.sin) && a.trig.stride_b % 4 == 0 &&
                       a.trig.stride_s % 4 == 0;
  return launch(op, a, q, k, aligned);
}

at::Tensor apply_rotary_emb(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  return std::get<0>(api("apply_rotary_emb", x, nullptr, cos, sin));
}

Pair apply_rotary_emb_qk(const at::Tensor& q, const at::Tensor& k, const at::Tensor& cos, const at::Tensor& sin) {
  return api("apply_rotary_emb_qk", q, &k, cos, sin);
}

Pair apply_rotary_emb_table_qk(const at::Tensor& q, const at::Tensor& k, const at::Tensor& cos_table,
                               const at::Tensor& sin_table, const at::Tensor& index) {
  const char* op = "apply_rotary_emb_table_qk";
  RopeArgs a = make_args(op, q, &k);
  set_table(a, op, q, cos_table, sin_table, index);
  return launch(op, a, q, &k, true);
}

Pair apply_rotary_emb_coords_qk(const at::Tensor& q, const at::Tensor& k, const at::Tensor& coords,
                                const at::Tensor& freqs) {
  const char* op = "apply_rotary_emb_coords_qk";
  RopeArgs a = make_args(op, q, &k);
  a.trig.mode = TrigMode::Coords;
  per_token(coords, q, 3, at::kFloat, op, "coords", a.trig);
  check_device(freqs, q, "freqs");
  check_dtype(freqs, at::kFloat, "freqs");
  TORCH_CHECK(freqs.dim() == 1 && freqs.size(0) == a.trig.f && freqs.is_contiguous(), op,
              ": freqs must be contiguous [D/6] = [", a.trig.f, "], got ", freqs.sizes());
  a.trig.coords = coords.data_ptr<float>();
  a.trig.freqs = freqs.data_ptr<float>();
  return launch(op, a, q, &k, true);
}

Pair rms_norm_rope_table_qk(const at::Tensor& q, const at::Tensor& k, const std::optional<at::Tensor>& q_weight,
                            const std::optional<at::Tensor>& k_weight, double eps, const at::Tensor& cos_table,
                            const at::Tensor& sin_table, const at::Tensor& index) {
  const char* op = "rms_norm_rope_table_qk";
  RopeArgs a = make_args(op, q, &k);
  set_table(a, op, q, cos_table, sin_table, index);
  TORCH_CHECK(eps >= 0.0, op, ": eps must be >= 0, got ", eps);
  a.norm = true;
  a.eps = static_cast<float>(eps);
  TORCH_CHECK(q_weight.has_value() == k_weight.has_value(), op, ": give both q_weight and k_weight or neither");
  if (q_weight) {
    for (const auto* w : {&*q_weight, &*k_weight}) {
      check_device(*w, q, "weight");
      TORCH_CHECK(w->dim() == 1 && w->size(0) == a.d && w->is_contiguous(), op, ": weights must be contiguous [",
                  a.d, "], got ", w->sizes());
      TORCH_CHECK(w->scalar_type() == q.scalar_type() || w->scalar_type() == at::kFloat, op, ": weight dtype ",
                  w->scalar_type(), " must equal q dtype ", q.scalar_type(), " or be float32");
    }
    TORCH_CHECK(q_weight->scalar_type() == k_weight->scalar_type(), op, ": q_weight and k_weight dtypes differ");
    a.q_weight = q_weight->data_ptr();
    a.k_weight = k_weight->data_ptr();
    a.weight_dtype = dtype_of(*q_weight, "weight");
  }
  return launch(op, a, q, &k, true);
}

// Per-axis tables with diffusers' ops: freqs = theta ** linspace(0, 1, dim // 6) * pi / 2;
// angle[p, k] = freqs[k] * (positions[p] * 2 - 1); returns (cos, sin) [P, dim // 6] in fp32.
Pair ltx_rope_tables(const at::Tensor& positions, int64_t dim, double theta) {
  check_dtype(positions, at::kFloat, "positions");
  TORCH_CHECK(positions.dim() == 1, "ltx_rope_tables: positions must be 1-D, got ", positions.sizes());
  TORCH_CHECK(dim >= 6, "ltx_rope_tables: dim must be >= 6, got ", dim);
  // diffusers' endpoints log(1, theta) and log(theta, theta) are exactly 0 and 1 for every theta where
  // Python's math.log accepts them (finite, > 0, != 1); no std::log here: glibc 2.29+ binds it to
  // log@GLIBC_2.29, which manylinux_2_28 does not allow.
  TORCH_CHECK(std::isfinite(theta) && theta > 0 && theta != 1,
              "ltx_rope_tables: theta must be finite, > 0 and != 1, got ", theta);
  const auto opts = positions.options();
  auto freqs = at::pow(theta, at::linspace(0.0, 1.0, dim / 6, opts));
  freqs = freqs * M_PI / 2.0;
  const auto angles = freqs.unsqueeze(0) * (positions.unsqueeze(1) * 2 - 1);
  return {at::cos(angles), at::sin(angles)};
}

// Meta: the outputs' metadata without running a kernel (torch.compile's fake tensors, shape
// inference), after the checks that need no data. k's output has q's shape, as launch() allocates it.
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
