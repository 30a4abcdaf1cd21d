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
#include "rope3d.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/stable_cuda_glue.h"
#include "rope3d_launch.h"
#endif

namespace khub_kernels::rope3d {
namespace {

using namespace khub_kernels::stable_glue;
using Pair = std::tuple<Tensor, Tensor>;
using OptTensor = std::optional<Tensor>;
using torch::headeronly::DeviceType;

// Per-token side tensor [B or 1, S, width] of dtype want: sets stride_b / stride_s.
void per_token(const Tensor& t, const Tensor& x, int64_t width, ScalarType want, const char* op, const char* name,
               TrigParams& p) {
  check_device(t, x, name);
  check_dtype(t, want, name);
  STD_TORCH_CHECK(t.dim() == 3 && (t.size(0) == 1 || t.size(0) == x.size(0)) && t.size(1) == x.size(1) &&
                      t.size(2) == width,
                  op, ": ", name, " must have shape [", x.size(0), " or 1, ", x.size(1), ", ", width, "], got ",
                  shape_of(t));
  check_last_contiguous(t, name);
  p.stride_b = t.size(0) == 1 ? 0 : t.stride(0);
  p.stride_s = t.stride(1);
}

// q must be [B, S, D] with D even, in a supported dtype. The Meta registrations run the checks that
// need no data: dtype and rank (D may be symbolic there; the real op checks it).
void check_q_rank(const char* op, const Tensor& q) {
  dtype_of(q, "q");
  STD_TORCH_CHECK(q.dim() == 3, op, ": q must have shape [B, S, D], got a tensor of ", q.dim(), " dimensions");
}

void check_q_shape(const char* op, const Tensor& q) {
  check_q_rank(op, q);
  STD_TORCH_CHECK(q.size(2) % 2 == 0, op, ": D must be even (channel pairs), got ", q.size(2));
}

RopeArgs make_args(const char* op, const Tensor& q, const Tensor* k) {
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
    STD_TORCH_CHECK(k->scalar_type() == q.scalar_type() && same_sizes(*k, q), op,
                    ": k must match q in dtype and shape (", q.scalar_type(), " ", shape_of(q), "), got ",
                    k->scalar_type(), " ", shape_of(*k));
    a.k = k->data_ptr();
    a.k_layout = row_layout(*k, "k");
  }
  return a;
}

// Every element of a CPU index [B or 1, S, 3] (last dimension contiguous) lies in [0, rows).
bool index_in_range(const Tensor& index, int64_t rows) {
  const auto* p = static_cast<const int32_t*>(index.data_ptr());
  for (int64_t b = 0; b < index.size(0); ++b)
    for (int64_t s = 0; s < index.size(1); ++s)
      for (int64_t c = 0; c < 3; ++c) {
        const int32_t v = p[b * index.stride(0) + s * index.stride(1) + c];
        if (v < 0 || v >= rows) return false;
      }
  return true;
}

void set_table(RopeArgs& a, const char* op, const Tensor& q, const Tensor& cos_t, const Tensor& sin_t,
               const Tensor& index) {
  a.trig.mode = TrigMode::Table;
  for (const auto* t : {&cos_t, &sin_t}) {
    check_device(*t, q, "table");
    check_dtype(*t, ScalarType::Float, "table");
    STD_TORCH_CHECK(t->dim() == 2 && t->size(1) == a.trig.f && t->is_contiguous(), op,
                    ": cos/sin tables must be contiguous [P, D/6] = [P, ", a.trig.f, "], got ", shape_of(*t));
  }
  STD_TORCH_CHECK(same_sizes(cos_t, sin_t), op, ": cos and sin tables differ in shape");
  STD_TORCH_CHECK(cos_t.numel() <= INT32_MAX, op, ": cos/sin tables must have fewer than 2^31 elements, got ",
                  cos_t.numel());  // the kernels index them in 32 bits
  per_token(index, q, 3, ScalarType::Int, op, "index", a.trig);
  if (index.is_cpu() && index.numel() > 0)
    STD_TORCH_CHECK(index_in_range(index, cos_t.size(0)), op, ": index values must lie in [0, ", cos_t.size(0), ")");
  a.trig.cos_table = static_cast<const float*>(cos_t.data_ptr());
  a.trig.sin_table = static_cast<const float*>(sin_t.data_ptr());
  a.trig.index = static_cast<const int32_t*>(index.data_ptr());
}

// Rotates q (and k, whose output goes to *k_out); returns q's output.
Tensor launch(const char* op, RopeArgs& a, const Tensor& q, const Tensor* k, bool trig_aligned,
              OptTensor* k_out = nullptr) {
  Tensor qo = empty_output_like(q);
  a.q_out = qo.data_ptr();
  if (k) {
    *k_out = empty_output_like(q);
    a.k_out = (*k_out)->data_ptr();
  }
  if (qo.numel() == 0) return qo;
  if (q.is_cpu()) {
    parallel_rows(a.q_layout.rows, a.d, [&](int64_t b, int64_t e) { rope3d_cpu(a, b, e); });
    return qo;
  }
#ifdef KHUB_KERNEL_CUDA
  const torch::stable::accelerator::DeviceGuard guard(q.get_device_index());
  bool vector_ok = trig_aligned && a.d % (16 / static_cast<int64_t>(q.element_size())) == 0 &&
                   rows_aligned16(q, a.q_layout);
  if (k) vector_ok = vector_ok && rows_aligned16(*k, a.k_layout);
  if (a.q_weight) vector_ok = vector_ok && aligned16(a.q_weight);
  if (a.k_weight) vector_ok = vector_ok && aligned16(a.k_weight);
  check_launch(launch_rope3d(a, vector_ok, current_stream(q)), op);
  return qo;
#else
  (void)trig_aligned;
  STD_TORCH_CHECK(false, op, ": this is a CPU build; no CUDA implementation");
#endif
}

// Rotates q and k (both outputs) and returns the pair.
Pair launch_qk(const char* op, RopeArgs& a, const Tensor& q, const Tensor& k, bool trig_aligned) {
  OptTensor ko;
  Tensor qo = launch(op, a, q, &k, trig_aligned, &ko);
  return {qo, *ko};
}

Tensor api(const char* op, const Tensor& q, const Tensor* k, const Tensor& cos, const Tensor& sin,
           OptTensor* k_out = nullptr) {
  RopeArgs a = make_args(op, q, k);
  per_token(cos, q, a.d, ScalarType::Float, op, "cos", a.trig);
  TrigParams sin_p;
  per_token(sin, q, a.d, ScalarType::Float, op, "sin", sin_p);
  STD_TORCH_CHECK(sin_p.stride_b == a.trig.stride_b && sin_p.stride_s == a.trig.stride_s, op,
                  ": cos and sin must have the same strides");
  a.trig.mode = TrigMode::Api;
  a.trig.cos = static_cast<const float*>(cos.data_ptr());
  a.trig.sin = static_cast<const float*>(sin.data_ptr());
  const bool aligned = aligned16(a.trig.cos) && aligned16(a.trig.sin) && a.trig.stride_b % 4 == 0 &&
                       a.trig.stride_s % 4 == 0;
  return launch(op, a, q, k, aligned, k_out);
}

Tensor apply_rotary_emb(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  return api("apply_rotary_emb", x, nullptr, cos, sin);
}

Pair apply_rotary_emb_qk(const Tensor& q, const Tensor& k, const Tensor& cos, const Tensor& sin) {
  OptTensor ko;
  Tensor qo = api("apply_rotary_emb_qk", q, &k, cos, sin, &ko);
  return {qo, *ko};
}

Pair apply_rotary_emb_table_qk(const Tensor& q, const Tensor& k, const Tensor& cos_table, const Tensor& sin_table,
                               const Tensor& index) {
  const char* op = "apply_rotary_emb_table_qk";
  RopeArgs a = make_args(op, q, &k);
  set_table(a, op, q, cos_table, sin_table, index);
  return launch_qk(op, a, q, k, true);
}

Pair apply_rotary_emb_coords_qk(const Tensor& q, const Tensor& k, const Tensor& coords, const Tensor& freqs) {
  const char* op = "apply_rotary_emb_coords_qk";
  RopeArgs a = make_args(op, q, &k);
  a.trig.mode = TrigMode::Coords;
  per_token(coords, q, 3, ScalarType::Float, op, "coords", a.trig);
  check_device(freqs, q, "freqs");
  check_dtype(freqs, ScalarType::Float, "freqs");
  STD_TORCH_CHECK(freqs.dim() == 1 && freqs.size(0) == a.trig.f && freqs.is_contiguous(), op,
                  ": freqs must be contiguous [D/6] = [", a.trig.f, "], got ", shape_of(freqs));
  a.trig.coords = static_cast<const float*>(coords.data_ptr());
  a.trig.freqs = static_cast<const float*>(freqs.data_ptr());
  return launch_qk(op, a, q, k, true);
}

Pair rms_norm_rope_table_qk(const Tensor& q, const Tensor& k, const OptTensor& q_weight, const OptTensor& k_weight,
                            double eps, const Tensor& cos_table, const Tensor& sin_table, const Tensor& index) {
  const char* op = "rms_norm_rope_table_qk";
  RopeArgs a = make_args(op, q, &k);
  set_table(a, op, q, cos_table, sin_table, index);
  STD_TORCH_CHECK(eps >= 0.0, op, ": eps must be >= 0, got ", eps);
  a.norm = true;
  a.eps = static_cast<float>(eps);
  STD_TORCH_CHECK(q_weight.has_value() == k_weight.has_value(), op, ": give both q_weight and k_weight or neither");
  if (q_weight) {
    for (const auto* w : {&*q_weight, &*k_weight}) {
      check_device(*w, q, "weight");
      STD_TORCH_CHECK(w->dim() == 1 && w->size(0) == a.d && w->is_contiguous(), op, ": weights must be contiguous [",
                      a.d, "], got ", shape_of(*w));
      STD_TORCH_CHECK(w->scalar_type() == q.scalar_type() || w->scalar_type() == ScalarType::Float, op,
                      ": weight dtype ", w->scalar_type(), " must equal q dtype ", q.scalar_type(), " or be float32");
    }
    STD_TORCH_CHECK(q_weight->scalar_type() == k_weight->scalar_type(), op, ": q_weight and k_weight dtypes differ");
    a.q_weight = q_weight->data_ptr();
    a.k_weight = k_weight->data_ptr();
    a.weight_dtype = dtype_of(*q_weight, "weight");
  }
  return launch_qk(op, a, q, k, true);
}

void check_table_args(const Tensor& positions, int64_t dim, double theta) {
  check_dtype(positions, ScalarType::Float, "positions");
  STD_TORCH_CHECK(positions.dim() == 1, "ltx_rope_tables: positions must be 1-D, got ", shape_of(positions));
  STD_TORCH_CHECK(dim >= 6, "ltx_rope_tables: dim must be >= 6, got ", dim);
  // No std::log (see torch_binding.cpp): diffusers' endpoints are exactly 0 and 1 for every valid theta.
  STD_TORCH_CHECK(std::isfinite(theta) && theta > 0 && theta != 1,
                  "ltx_rope_tables: theta must be finite, > 0 and != 1, got ", theta);
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
  check_table_args(positions, dim, theta);
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
  check_table_args(positions, dim, theta);
  const int64_t f = dim / 6;
  const Tensor columns = torch::stable::empty({f}, ScalarType::Float, std::nullopt, positions.device());
  const Tensor shaped = call_aten("aten::mul", "Tensor", torch::stable::unsqueeze(positions, 1),
                                  torch::stable::unsqueeze(columns, 0));
  return {empty_output_like(shaped), empty_output_like(shaped)};
}

// Meta: the outputs' metadata without running a kernel, after the checks that need no data. k's
// output has q's shape, as launch() allocates it.
Pair meta_qk(const char* op, const Tensor& q) {
  check_q_rank(op, q);
  return {empty_output_like(q), empty_output_like(q)};
}

Tensor apply_rotary_emb_meta(const Tensor& x, const Tensor&, const Tensor&) {
  check_q_rank("apply_rotary_emb", x);
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
