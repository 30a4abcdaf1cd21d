// The rope3d ops' argument checks and run, written once for the three bindings (torch_binding.cpp,
// torch_binding_stable.cpp, tvm_ffi_binding.cpp) over their glue policy G (khub_kernels/arg_checks.h).
// A binding converts its arguments, calls the op's function here with the outputs it allocates or the
// caller gave, and registers or exports the ops. No torch and no tvm-ffi here.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "khub_kernels/arg_checks.h"
#include "rope3d.h"
#ifdef KHUB_KERNEL_CUDA
#include "rope3d_launch.h"
#endif

namespace khub_kernels::rope3d {

// q must be [B, S, D] in a supported dtype: the checks the Meta registrations run too (D may be
// symbolic there, so its evenness is the real op's to check).
template <class G>
void check_q_rank(const char* op, const typename G::Tensor& q) {
  G::dtype_of(q, "q");
  KHUB_CHECK_VALUE(G, q.dim() == 3, op, ": q must have shape [B, S, D], got ", G::rank_found(q));
}

// Per-token side tensor [B or 1, S, width] of dtype want: sets stride_b / stride_s.
template <class G>
void per_token(const typename G::Tensor& t, const typename G::Tensor& x, int64_t width, typename G::Dtype want,
               const char* op, const char* name, TrigParams& p) {
  G::check_device(t, x, name);
  G::check_dtype(t, want, name);
  KHUB_CHECK_VALUE(G,
                   t.dim() == 3 && (t.size(0) == 1 || t.size(0) == x.size(0)) && t.size(1) == x.size(1) &&
                       t.size(2) == width,
                   op, ": ", name, " must have shape [", x.size(0), " or 1, ", x.size(1), ", ", width, "], got ",
                   G::shape(t));
  G::check_last_contiguous(t, name);
  p.stride_b = t.size(0) == 1 ? 0 : t.stride(0);
  p.stride_s = t.stride(1);
}

template <class G>
RopeArgs make_args(const char* op, const typename G::Tensor& q, const typename G::Tensor* k) {
  G::check_backend(q, op);
  check_q_rank<G>(op, q);
  KHUB_CHECK_VALUE(G, q.size(2) % 2 == 0, op, ": D must be even (channel pairs), got ", q.size(2));
  RopeArgs a;
  a.dtype = G::dtype_of(q, "q");
  a.d = q.size(2);
  a.q = q.data_ptr();
  a.q_layout = G::row_layout(q, "q");
  a.trig.seq = std::max<int64_t>(q.size(1), 1);
  a.trig.f = static_cast<int>(a.d / 6);
  a.trig.pad_pairs = static_cast<int>((a.d % 6) / 2);
  if (k) {
    G::check_device(*k, q, "k");
    KHUB_CHECK_VALUE(G, G::same_dtype(*k, q) && G::same_sizes(*k, q), op, ": k must match q in dtype and shape (",
                     G::dtype_name(q), " ", G::shape(q), "), got ", G::dtype_name(*k), " ", G::shape(*k));
    a.k = k->data_ptr();
    a.k_layout = G::row_layout(*k, "k");
  }
  return a;
}

// Every element of a CPU index [B or 1, S, 3] (last dimension contiguous) lies in [0, rows). Branch-free:
// each value is compared unsigned with min(rows, 2^31), above which negative values wrap, and a
// contiguous [S, 3] block goes in runs of 16 the compiler vectorizes (24K values on the 2-core machine:
// 4 us, where the torch binding's ATen min() and max() took 6.4 and an early-exit loop 27). Sizes and
// strides are read once: a stable tensor's accessors are calls into libtorch.
template <class G>
bool index_in_range(const typename G::Tensor& index, int64_t rows) {
  const auto* p = static_cast<const int32_t*>(index.data_ptr());
  const int64_t nb = index.size(0), ns = index.size(1), sb = index.stride(0), ss = index.stride(1);
  const auto limit = static_cast<uint32_t>(std::min<int64_t>(rows, int64_t{1} << 31));
  uint32_t bad = 0;
  for (int64_t b = 0; b < nb; ++b) {
    const int32_t* v = p + b * sb;
    if (ss == 3) {
      const int64_t n = 3 * ns;
      int64_t i = 0;
      for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; ++j) bad |= static_cast<uint32_t>(v[i + j]) >= limit;
      for (; i < n; ++i) bad |= static_cast<uint32_t>(v[i]) >= limit;
    } else {
      for (int64_t s = 0; s < ns; ++s, v += ss)
        for (int c = 0; c < 3; ++c) bad |= static_cast<uint32_t>(v[c]) >= limit;
    }
  }
  return bad == 0;
}

template <class G>
void set_table(RopeArgs& a, const char* op, const typename G::Tensor& q, const typename G::Tensor& cos_t,
               const typename G::Tensor& sin_t, const typename G::Tensor& index) {
  a.trig.mode = TrigMode::Table;
  for (const auto* t : {&cos_t, &sin_t}) {
    G::check_device(*t, q, "table");
    G::check_dtype(*t, G::kFloat32, "table");
    KHUB_CHECK_VALUE(G, t->dim() == 2 && t->size(1) == a.trig.f && t->is_contiguous(), op,
                     ": cos/sin tables must be contiguous [P, D/6] = [P, ", a.trig.f, "], got ", G::shape(*t));
  }
  KHUB_CHECK_VALUE(G, G::same_sizes(cos_t, sin_t), op, ": cos and sin tables differ in shape");
  KHUB_CHECK_VALUE(G, cos_t.numel() <= INT32_MAX, op, ": cos/sin tables must have fewer than 2^31 elements, got ",
                   cos_t.numel());  // the kernels index them in 32 bits
  per_token<G>(index, q, 3, G::kInt32, op, "index", a.trig);
  // Empty tables leave no valid index, wherever it lives: a CUDA index's values are not read here (that
  // would wait for the device), and the kernel would read outside the tables.
  KHUB_CHECK_VALUE(G, index.numel() == 0 || cos_t.size(0) > 0, op, ": index values must lie in [0, 0)");
  if (index.is_cpu() && index.numel() > 0)
    KHUB_CHECK_VALUE(G, index_in_range<G>(index, cos_t.size(0)), op, ": index values must lie in [0, ",
                     cos_t.size(0), ")");
  a.trig.cos_table = static_cast<const float*>(cos_t.data_ptr());
  a.trig.sin_table = static_cast<const float*>(sin_t.data_ptr());
  a.trig.index = static_cast<const int32_t*>(index.data_ptr());
}

// Rotates q into output 0 of outs (and k, when given, into output 1). outs.take(i, like, op, name)
// returns where output i goes: the torch bindings allocate it there, the tvm-ffi binding checks the
// caller's, after every input check as it always did.
template <class G, class Outputs>
void run(const char* op, RopeArgs& a, const typename G::Tensor& q, const typename G::Tensor* k, bool trig_aligned,
         Outputs& outs) {
  a.q_out = outs.take(0, q, op, k ? "q_out" : "out");
  if (k) a.k_out = outs.take(1, q, op, "k_out");
  if (q.numel() == 0) return;
  if (q.is_cpu()) {
    G::parallel_rows(a.q_layout.rows, a.d, [&](int64_t b, int64_t e) { rope3d_cpu(a, b, e); });
    return;
  }
#ifdef KHUB_KERNEL_CUDA
  const typename G::Cuda::DeviceGuard guard(q);
  bool vector_ok = trig_aligned && a.d % (16 / static_cast<int64_t>(q.element_size())) == 0 &&
                   G::rows_aligned16(q, a.q_layout);
  if (k) vector_ok = vector_ok && G::rows_aligned16(*k, a.k_layout);
  if (a.q_weight) vector_ok = vector_ok && G::aligned16(a.q_weight);
  if (a.k_weight) vector_ok = vector_ok && G::aligned16(a.k_weight);
  G::Cuda::check_launch(launch_rope3d(a, vector_ok, G::Cuda::current_stream(q)), op);
#else
  (void)trig_aligned;
  G::fail_value(KHUB_CHECK_SITE(), op, ": this is a CPU build; no CUDA implementation");
#endif
}

// apply_rotary_emb (k null) and apply_rotary_emb_qk: full fp32 cos / sin [B or 1, S, D].
template <class G, class Outputs>
void rotate_api(const char* op, const typename G::Tensor& q, const typename G::Tensor* k,
                const typename G::Tensor& cos, const typename G::Tensor& sin, Outputs& outs) {
  RopeArgs a = make_args<G>(op, q, k);
  per_token<G>(cos, q, a.d, G::kFloat32, op, "cos", a.trig);
  TrigParams sin_p;
  per_token<G>(sin, q, a.d, G::kFloat32, op, "sin", sin_p);
  KHUB_CHECK_VALUE(G, sin_p.stride_b == a.trig.stride_b && sin_p.stride_s == a.trig.stride_s, op,
                   ": cos and sin must have the same strides");
  a.trig.mode = TrigMode::Api;
  a.trig.cos = static_cast<const float*>(cos.data_ptr());
  a.trig.sin = static_cast<const float*>(sin.data_ptr());
  const bool aligned = G::aligned16(a.trig.cos) && G::aligned16(a.trig.sin) && a.trig.stride_b % 4 == 0 &&
                       a.trig.stride_s % 4 == 0;
  run<G>(op, a, q, k, aligned, outs);
}

// apply_rotary_emb_table_qk: per-axis tables and a per-token index.
template <class G, class Outputs>
void rotate_table(const typename G::Tensor& q, const typename G::Tensor& k, const typename G::Tensor& cos_table,
                  const typename G::Tensor& sin_table, const typename G::Tensor& index, Outputs& outs) {
  const char* op = "apply_rotary_emb_table_qk";
  RopeArgs a = make_args<G>(op, q, &k);
  set_table<G>(a, op, q, cos_table, sin_table, index);
  run<G>(op, a, q, &k, true, outs);
}

// apply_rotary_emb_coords_qk: per-token coordinates and per-axis frequencies.
template <class G, class Outputs>
void rotate_coords(const typename G::Tensor& q, const typename G::Tensor& k, const typename G::Tensor& coords,
                   const typename G::Tensor& freqs, Outputs& outs) {
  const char* op = "apply_rotary_emb_coords_qk";
  RopeArgs a = make_args<G>(op, q, &k);
  a.trig.mode = TrigMode::Coords;
  per_token<G>(coords, q, 3, G::kFloat32, op, "coords", a.trig);
  G::check_device(freqs, q, "freqs");
  G::check_dtype(freqs, G::kFloat32, "freqs");
  KHUB_CHECK_VALUE(G, freqs.dim() == 1 && freqs.size(0) == a.trig.f && freqs.is_contiguous(), op,
                   ": freqs must be contiguous [D/6] = [", a.trig.f, "], got ", G::shape(freqs));
  a.trig.coords = static_cast<const float*>(coords.data_ptr());
  a.trig.freqs = static_cast<const float*>(freqs.data_ptr());
  run<G>(op, a, q, &k, true, outs);
}

// rms_norm_rope_table_qk: the table rotation after an RMSNorm of each row; weights both or neither.
template <class G, class Outputs>
void norm_rotate_table(const typename G::Tensor& q, const typename G::Tensor& k, const typename G::Tensor* q_weight,
                       const typename G::Tensor* k_weight, double eps, const typename G::Tensor& cos_table,
                       const typename G::Tensor& sin_table, const typename G::Tensor& index, Outputs& outs) {
  const char* op = "rms_norm_rope_table_qk";
  RopeArgs a = make_args<G>(op, q, &k);
  set_table<G>(a, op, q, cos_table, sin_table, index);
  KHUB_CHECK_VALUE(G, eps >= 0.0, op, ": eps must be >= 0, got ", eps);
  a.norm = true;
  a.eps = static_cast<float>(eps);
  KHUB_CHECK_VALUE(G, (q_weight != nullptr) == (k_weight != nullptr), op,
                   ": give both q_weight and k_weight or neither");
  if (q_weight) {
    for (const auto* w : {q_weight, k_weight}) {
      G::check_device(*w, q, "weight");
      KHUB_CHECK_VALUE(G, w->dim() == 1 && w->size(0) == a.d && w->is_contiguous(), op,
                       ": weights must be contiguous [", a.d, "], got ", G::shape(*w));
      KHUB_CHECK_TYPE(G, G::same_dtype(*w, q) || G::is_float32(*w), op, ": weight dtype ", G::dtype_name(*w),
                      " must equal q dtype ", G::dtype_name(q), " or be float32");
    }
    KHUB_CHECK_TYPE(G, G::same_dtype(*q_weight, *k_weight), op, ": q_weight and k_weight dtypes differ");
    a.q_weight = q_weight->data_ptr();
    a.k_weight = k_weight->data_ptr();
    a.weight_dtype = G::dtype_of(*q_weight, "weight");
  }
  run<G>(op, a, q, &k, true, outs);
}

// ltx_rope_tables' arguments (the torch and stable builds; the tables are made of each one's ATen ops).
// No std::log in the table builders: glibc 2.29+ binds it to log@GLIBC_2.29, which manylinux_2_28 does
// not allow, and diffusers' linspace endpoints log(1, theta) and log(theta, theta) are exactly 0 and 1
// for every theta Python's math.log accepts (finite, > 0, != 1), which this checks.
template <class G>
void check_table_args(const typename G::Tensor& positions, int64_t dim, double theta) {
  G::check_dtype(positions, G::kFloat32, "positions");
  KHUB_CHECK_VALUE(G, positions.dim() == 1, "ltx_rope_tables: positions must be 1-D, got ", G::shape(positions));
  KHUB_CHECK_VALUE(G, dim >= 6, "ltx_rope_tables: dim must be >= 6, got ", dim);
  KHUB_CHECK_VALUE(G, std::isfinite(theta) && theta > 0 && theta != 1,
                   "ltx_rope_tables: theta must be finite, > 0 and != 1, got ", theta);
}

}  // namespace khub_kernels::rope3d
