// tvm-ffi binding of the rope3d kernel (tvm-ffi<MM> variants): the rotation ops of torch_binding.cpp as C-ABI
// functions over caller-allocated DLPack tensors, on the same torch-free CPU implementation and CUDA
// launcher. `<op>_cpu` in every variant, `<op>_cuda` in CUDA variants; outputs come first. ltx_rope_tables
// is not here: it builds its tables with ATen's own pow/linspace/cos/sin (bit-equal to diffusers), which a
// torch-free module has no equal of; callers pass tables they made.
//   apply_rotary_emb_{cpu,cuda}(out, x, cos, sin)
//   apply_rotary_emb_qk_{cpu,cuda}(q_out, k_out, q, k, cos, sin)
//   apply_rotary_emb_table_qk_{cpu,cuda}(q_out, k_out, q, k, cos_table, sin_table, index)
//   apply_rotary_emb_coords_qk_{cpu,cuda}(q_out, k_out, q, k, coords, freqs)
//   rms_norm_rope_table_qk_{cpu,cuda}(q_out, k_out, q, k, q_weight | None, k_weight | None, eps, cos_table,
//                                     sin_table, index)
#include <tvm/ffi/tvm_ffi.h>

#include <climits>
#include <cstdint>
#include <optional>

#include "khub_kernels/tvm_ffi_glue.h"
#include "rope3d.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/tvm_ffi_cuda_glue.h"
#include "rope3d_launch.h"
#endif

namespace khub_kernels::rope3d {
namespace {

using namespace khub_kernels::ffi_glue;
using tvm::ffi::Optional;
using tvm::ffi::TensorView;

// Per-token side tensor [B or 1, S, width] of dtype want: sets stride_b / stride_s.
void per_token(const Tensor& t, const Tensor& x, int64_t width, DLDataType want, const char* op, const char* name,
               TrigParams& p) {
  check_device(t, x, name);
  check_dtype(t, want, name);
  KHUB_FFI_CHECK(t.dim() == 3 && (t.size(0) == 1 || t.size(0) == x.size(0)) && t.size(1) == x.size(1) &&
                     t.size(2) == width,
                 ValueError, op, ": ", name, " must have shape [", x.size(0), " or 1, ", x.size(1), ", ", width,
                 "], got ", shape_of(t));
  check_last_contiguous(t, name);
  p.stride_b = t.size(0) == 1 ? 0 : t.stride(0);
  p.stride_s = t.stride(1);
}

RopeArgs make_args(Backend backend, const char* op, const Tensor& q, const Tensor* k) {
  check_backend(q, backend, op);
  dtype_of(q, "q");
  KHUB_FFI_CHECK(q.dim() == 3, ValueError, op, ": q must have shape [B, S, D], got a tensor of ", q.dim(),
                 " dimensions");
  KHUB_FFI_CHECK(q.size(2) % 2 == 0, ValueError, op, ": D must be even (channel pairs), got ", q.size(2));
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
    KHUB_FFI_CHECK(same_dtype(k->dtype(), q.dtype()) && same_sizes(*k, q), ValueError, op,
                   ": k must match q in dtype and shape (", dtype_name(q.dtype()), " ", shape_of(q), "), got ",
                   dtype_name(k->dtype()), " ", shape_of(*k));
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
    check_dtype(*t, kFloat32, "table");
    KHUB_FFI_CHECK(t->dim() == 2 && t->size(1) == a.trig.f && t->is_contiguous(), ValueError, op,
                   ": cos/sin tables must be contiguous [P, D/6] = [P, ", a.trig.f, "], got ", shape_of(*t));
  }
  KHUB_FFI_CHECK(same_sizes(cos_t, sin_t), ValueError, op, ": cos and sin tables differ in shape");
  KHUB_FFI_CHECK(cos_t.numel() <= INT32_MAX, ValueError, op,
                 ": cos/sin tables must have fewer than 2^31 elements, got ", cos_t.numel());
  per_token(index, q, 3, kInt32, op, "index", a.trig);
  if (index.is_cpu() && index.numel() > 0)
    KHUB_FFI_CHECK(index_in_range(index, cos_t.size(0)), ValueError, op, ": index values must lie in [0, ",
                   cos_t.size(0), ")");
  a.trig.cos_table = static_cast<const float*>(cos_t.data_ptr());
  a.trig.sin_table = static_cast<const float*>(sin_t.data_ptr());
  a.trig.index = static_cast<const int32_t*>(index.data_ptr());
}

// Rotates q into q_out (and k into k_out).
void launch(Backend backend, const char* op, RopeArgs& a, const Tensor& q_out, const Tensor& q, const Tensor* k_out,
            const Tensor* k, bool trig_aligned) {
  check_output(q_out, q, op, k ? "q_out" : "out");
  check_output_shape(q_out, q, op, k ? "q_out" : "out");
  a.q_out = q_out.data_ptr();
  if (k) {
    check_output(*k_out, q, op, "k_out");
    check_output_shape(*k_out, q, op, "k_out");
    a.k_out = k_out->data_ptr();
  }
  if (q_out.numel() == 0) return;
  if (backend == Backend::Cpu) {
    parallel_rows(a.q_layout.rows, a.d, [&](int64_t b, int64_t e) { rope3d_cpu(a, b, e); });
    return;
  }
#ifdef KHUB_KERNEL_CUDA
  const DeviceGuard guard(q.device_index());
  bool vector_ok = trig_aligned && a.d % (16 / q.element_size()) == 0 && rows_aligned16(q, a.q_layout);
  if (k) vector_ok = vector_ok && rows_aligned16(*k, a.k_layout);
  if (a.q_weight) vector_ok = vector_ok && aligned16(a.q_weight);
  if (a.k_weight) vector_ok = vector_ok && aligned16(a.k_weight);
  check_launch(launch_rope3d(a, vector_ok, current_stream(q)), op);
#else
  (void)trig_aligned;
#endif
}

void api(Backend backend, const char* op, const Tensor& q_out, const Tensor& q, const Tensor* k_out,
         const Tensor* k, const Tensor& cos, const Tensor& sin) {
  RopeArgs a = make_args(backend, op, q, k);
  per_token(cos, q, a.d, kFloat32, op, "cos", a.trig);
  TrigParams sin_p;
  per_token(sin, q, a.d, kFloat32, op, "sin", sin_p);
  KHUB_FFI_CHECK(sin_p.stride_b == a.trig.stride_b && sin_p.stride_s == a.trig.stride_s, ValueError, op,
                 ": cos and sin must have the same strides");
  a.trig.mode = TrigMode::Api;
  a.trig.cos = static_cast<const float*>(cos.data_ptr());
  a.trig.sin = static_cast<const float*>(sin.data_ptr());
  const bool aligned = aligned16(a.trig.cos) && aligned16(a.trig.sin) && a.trig.stride_b % 4 == 0 &&
                       a.trig.stride_s % 4 == 0;
  launch(backend, op, a, q_out, q, k_out, k, aligned);
}

template <Backend B>
void apply_rotary_emb(TensorView out, TensorView x, TensorView cos, TensorView sin) {
  api(B, "apply_rotary_emb", out, x, nullptr, nullptr, cos, sin);
}

template <Backend B>
void apply_rotary_emb_qk(TensorView q_out, TensorView k_out, TensorView q, TensorView k, TensorView cos,
                         TensorView sin) {
  const Tensor ko(k_out), kk(k);
  api(B, "apply_rotary_emb_qk", q_out, q, &ko, &kk, cos, sin);
}

template <Backend B>
void apply_rotary_emb_table_qk(TensorView q_out, TensorView k_out, TensorView qv, TensorView k, TensorView cos_table,
                               TensorView sin_table, TensorView index) {
  const char* op = "apply_rotary_emb_table_qk";
  const Tensor q(qv), ko(k_out), kk(k);
  RopeArgs a = make_args(B, op, q, &kk);
  set_table(a, op, q, cos_table, sin_table, index);
  launch(B, op, a, q_out, q, &ko, &kk, true);
}

template <Backend B>
void apply_rotary_emb_coords_qk(TensorView q_out, TensorView k_out, TensorView qv, TensorView k, TensorView coords,
                                TensorView freqs_v) {
  const char* op = "apply_rotary_emb_coords_qk";
  const Tensor q(qv), ko(k_out), kk(k), freqs(freqs_v);
  RopeArgs a = make_args(B, op, q, &kk);
  a.trig.mode = TrigMode::Coords;
  per_token(coords, q, 3, kFloat32, op, "coords", a.trig);
  check_device(freqs, q, "freqs");
  check_dtype(freqs, kFloat32, "freqs");
  KHUB_FFI_CHECK(freqs.dim() == 1 && freqs.size(0) == a.trig.f && freqs.is_contiguous(), ValueError, op,
                 ": freqs must be contiguous [D/6] = [", a.trig.f, "], got ", shape_of(freqs));
  a.trig.coords = static_cast<const float*>(Tensor(coords).data_ptr());
  a.trig.freqs = static_cast<const float*>(freqs.data_ptr());
  launch(B, op, a, q_out, q, &ko, &kk, true);
}

template <Backend B>
void rms_norm_rope_table_qk(TensorView q_out, TensorView k_out, TensorView qv, TensorView k,
                            Optional<TensorView> q_weight_v, Optional<TensorView> k_weight_v, double eps,
                            TensorView cos_table, TensorView sin_table, TensorView index) {
  const char* op = "rms_norm_rope_table_qk";
  const Tensor q(qv), ko(k_out), kk(k);
  RopeArgs a = make_args(B, op, q, &kk);
  set_table(a, op, q, cos_table, sin_table, index);
  KHUB_FFI_CHECK(eps >= 0.0, ValueError, op, ": eps must be >= 0, got ", eps);
  a.norm = true;
  a.eps = static_cast<float>(eps);
  KHUB_FFI_CHECK(q_weight_v.has_value() == k_weight_v.has_value(), ValueError, op,
                 ": give both q_weight and k_weight or neither");
  if (q_weight_v.has_value()) {
    const Tensor qw(*q_weight_v), kw(*k_weight_v);
    for (const auto* w : {&qw, &kw}) {
      check_device(*w, q, "weight");
      KHUB_FFI_CHECK(w->dim() == 1 && w->size(0) == a.d && w->is_contiguous(), ValueError, op,
                     ": weights must be contiguous [", a.d, "], got ", shape_of(*w));
      KHUB_FFI_CHECK(same_dtype(w->dtype(), q.dtype()) || same_dtype(w->dtype(), kFloat32), TypeError, op,
                     ": weight dtype ", dtype_name(w->dtype()), " must equal q dtype ", dtype_name(q.dtype()),
                     " or be float32");
    }
    KHUB_FFI_CHECK(same_dtype(qw.dtype(), kw.dtype()), TypeError, op, ": q_weight and k_weight dtypes differ");
    a.q_weight = qw.data_ptr();
    a.k_weight = kw.data_ptr();
    a.weight_dtype = dtype_of(qw, "weight");
  }
  launch(B, op, a, q_out, q, &ko, &kk, true);
}

}  // namespace
}  // namespace khub_kernels::rope3d

namespace rope = khub_kernels::rope3d;
using khub_kernels::ffi_glue::Backend;

TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_rotary_emb_cpu, rope::apply_rotary_emb<Backend::Cpu>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_rotary_emb_qk_cpu, rope::apply_rotary_emb_qk<Backend::Cpu>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_rotary_emb_table_qk_cpu, rope::apply_rotary_emb_table_qk<Backend::Cpu>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_rotary_emb_coords_qk_cpu, rope::apply_rotary_emb_coords_qk<Backend::Cpu>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_rope_table_qk_cpu, rope::rms_norm_rope_table_qk<Backend::Cpu>);
#ifdef KHUB_KERNEL_CUDA
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_rotary_emb_cuda, rope::apply_rotary_emb<Backend::Cuda>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_rotary_emb_qk_cuda, rope::apply_rotary_emb_qk<Backend::Cuda>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_rotary_emb_table_qk_cuda, rope::apply_rotary_emb_table_qk<Backend::Cuda>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_rotary_emb_coords_qk_cuda, rope::apply_rotary_emb_coords_qk<Backend::Cuda>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(rms_norm_rope_table_qk_cuda, rope::rms_norm_rope_table_qk<Backend::Cuda>);
#endif
