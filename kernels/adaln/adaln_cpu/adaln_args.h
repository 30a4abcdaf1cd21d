// The adaln ops' argument checks and run, written once for the three bindings (torch_binding.cpp,
// torch_binding_stable.cpp, tvm_ffi_binding.cpp) over their glue policy G (khub_kernels/arg_checks.h).
// A binding converts its arguments, calls the op's function here with the outputs it allocates or the
// caller gave, and registers or exports the ops. No torch and no tvm-ffi here.
#pragma once
#include <cstdint>

#include "adaln.h"
#include "khub_kernels/arg_checks.h"
#ifdef KHUB_KERNEL_CUDA
#include "adaln_launch.h"
#endif

namespace khub_kernels::adaln {

// A checked modulation source and whether its rows allow 16-byte vectors.
struct Checked {
  ModSource src;
  bool aligned;
};

template <class G>
bool mod_aligned(const ModSource& m, int64_t es) {
  return G::aligned16(m.base) && (!m.table || G::aligned16(m.table)) && (m.stride_b * es) % 16 == 0 &&
         (m.stride_s * es) % 16 == 0;
}

// x (or h) must be [B, S, D] in a supported dtype: the checks that need no data, which the Meta
// registrations run too.
template <class G>
void check_x_shape(const typename G::Tensor& x, const char* op) {
  KHUB_CHECK_VALUE(G, x.dim() == 3, op, ": x must have shape [B, S, D], got ", G::rank_found(x));
  G::dtype_of(x, "x");
}

template <class G>
void check_x(const typename G::Tensor& x, const char* op) {
  G::check_backend(x, op);
  check_x_shape<G>(x, op);
}

// scale / shift / gate given as a tensor [B or 1, S or 1, D].
template <class G>
Checked mod_from_tensor(const typename G::Tensor& t, const typename G::Tensor& x, const char* op, const char* name) {
  G::check_device(t, x, name);
  KHUB_CHECK_TYPE(G, G::same_dtype(t, x), op, ": ", name, " dtype ", G::dtype_name(t), " must equal x dtype ",
                  G::dtype_name(x));
  KHUB_CHECK_VALUE(G,
                   t.dim() == 3 && (t.size(0) == 1 || t.size(0) == x.size(0)) &&
                       (t.size(1) == 1 || t.size(1) == x.size(1)) && t.size(2) == x.size(2),
                   op, ": ", name, " must have shape [B or 1, S or 1, D] = [", x.size(0), " or 1, ", x.size(1),
                   " or 1, ", x.size(2), "], got ", G::shape(t));
  G::check_last_contiguous(t, name);
  ModSource m;
  m.base = t.data_ptr();
  m.stride_b = t.size(0) == 1 ? 0 : t.stride(0);
  m.stride_s = t.size(1) == 1 ? 0 : t.stride(1);
  return {m, mod_aligned<G>(m, static_cast<int64_t>(t.element_size()))};
}

// chunk c of table [K, D] + temb [B or 1, T, K * D] (T = 1 or S).
template <class G>
Checked mod_from_table(const typename G::Tensor& table, const typename G::Tensor& temb, int64_t chunk,
                       const typename G::Tensor& x, const char* op) {
  G::check_device(table, x, "table");
  G::check_device(temb, x, "temb");
  KHUB_CHECK_TYPE(G, G::same_dtype(table, x) && G::same_dtype(temb, x), op,
                  ": table and temb dtypes must equal x dtype ", G::dtype_name(x), ", got ", G::dtype_name(table),
                  " and ", G::dtype_name(temb));
  const int64_t d = x.size(2);
  KHUB_CHECK_VALUE(G, table.dim() == 2 && table.size(1) == d, op, ": table must have shape [K, ", d, "], got ",
                   G::shape(table));
  const int64_t k = table.size(0);
  KHUB_CHECK_VALUE(G,
                   temb.dim() == 3 && (temb.size(0) == 1 || temb.size(0) == x.size(0)) &&
                       (temb.size(1) == 1 || temb.size(1) == x.size(1)) && temb.size(2) == k * d,
                   op, ": temb must have shape [B or 1, 1 or S, K*D] = [", x.size(0), ", 1 or ", x.size(1), ", ",
                   k * d, "], got ", G::shape(temb));
  KHUB_CHECK_VALUE(G, chunk >= 0 && chunk < k, op, ": chunk ", chunk, " out of range for a table of ", k, " rows");
  G::check_last_contiguous(table, "table");
  G::check_last_contiguous(temb, "temb");
  const auto es = static_cast<int64_t>(x.element_size());
  ModSource m;
  m.table = static_cast<const char*>(table.data_ptr()) + chunk * table.stride(0) * es;
  m.base = static_cast<const char*>(temb.data_ptr()) + chunk * d * es;
  m.stride_b = temb.size(0) == 1 ? 0 : temb.stride(0);
  m.stride_s = temb.size(1) == 1 ? 0 : temb.stride(1);
  return {m, mod_aligned<G>(m, es)};
}

// adaln of x into output 0 of outs, after the gated residual when delta is given (h_new goes to
// output 1). outs.take(i, like, op, name) returns where output i goes: the torch bindings allocate it
// there, the tvm-ffi binding checks the caller's. It is taken where the tvm-ffi binding has always
// checked it, so each binding still reports the first bad argument it did.
template <class G, class Outputs>
void run(const char* op, const typename G::Tensor& x, const typename G::Tensor* delta, const Checked* gate,
         const Checked& scale, const Checked& shift, double eps, Outputs& outs) {
  AdaLnArgs a;
  a.dtype = G::dtype_of(x, "x");
  a.x = x.data_ptr();
  a.x_layout = G::row_layout(x, "x");
  a.n = x.size(2);
  a.eps = static_cast<float>(eps);
  a.scale = scale.src;
  a.shift = shift.src;
  bool vector_ok = scale.aligned && shift.aligned && G::rows_aligned16(x, a.x_layout);
  KHUB_CHECK_VALUE(G, eps >= 0.0, op, ": eps must be >= 0, got ", eps);
  a.out = outs.take(0, x, op, "out");
  if (delta) {
    G::check_device(*delta, x, "delta");
    KHUB_CHECK_VALUE(G, G::same_dtype(*delta, x) && G::same_sizes(*delta, x), op,
                     ": delta must match h in dtype and shape (", G::dtype_name(x), " ", G::shape(x), "), got ",
                     G::dtype_name(*delta), " ", G::shape(*delta));
    a.delta = delta->data_ptr();
    a.delta_layout = G::row_layout(*delta, "delta");
    a.gate = gate->src;
    vector_ok = vector_ok && gate->aligned && G::rows_aligned16(*delta, a.delta_layout);
    a.h_out = outs.take(1, x, op, "h_out");
  }
  if (x.numel() == 0) return;
  if (x.is_cpu()) {
    G::parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { adaln_cpu(a, b, e); });
    return;
  }
#ifdef KHUB_KERNEL_CUDA
  const typename G::Cuda::DeviceGuard guard(x);
  vector_ok = vector_ok && a.n % (16 / static_cast<int64_t>(x.element_size())) == 0;
  G::Cuda::check_launch(launch_adaln(a, vector_ok, G::Cuda::current_stream(x)), op);
#else
  (void)vector_ok;
  G::fail_value(KHUB_CHECK_SITE(), op, ": this is a CPU build; no CUDA implementation");
#endif
}

// The four ops: adaln_rms, adaln_rms_table and their gated_residual_ forms. Shift is checked before
// scale, the order in which GCC evaluated the bindings' former call arguments (right to left), so a call
// with both wrong still reports shift; the gate comes first.

template <class G, class Outputs>
void adaln_from_tensors(const typename G::Tensor& x, const typename G::Tensor& scale,
                        const typename G::Tensor& shift, double eps, Outputs& outs) {
  const char* op = "adaln_rms";
  check_x<G>(x, op);
  const Checked sh = mod_from_tensor<G>(shift, x, op, "shift");
  const Checked sc = mod_from_tensor<G>(scale, x, op, "scale");
  run<G>(op, x, nullptr, nullptr, sc, sh, eps, outs);
}

template <class G, class Outputs>
void adaln_from_table(const typename G::Tensor& x, const typename G::Tensor& table, const typename G::Tensor& temb,
                      int64_t shift_chunk, double eps, Outputs& outs) {
  const char* op = "adaln_rms_table";
  check_x<G>(x, op);
  const Checked sh = mod_from_table<G>(table, temb, shift_chunk, x, op);
  const Checked sc = mod_from_table<G>(table, temb, shift_chunk + 1, x, op);
  run<G>(op, x, nullptr, nullptr, sc, sh, eps, outs);
}

template <class G, class Outputs>
void gated_adaln_from_tensors(const typename G::Tensor& h, const typename G::Tensor& delta,
                              const typename G::Tensor& gate, const typename G::Tensor& scale,
                              const typename G::Tensor& shift, double eps, Outputs& outs) {
  const char* op = "gated_residual_adaln_rms";
  check_x<G>(h, op);
  const Checked g = mod_from_tensor<G>(gate, h, op, "gate");
  const Checked sh = mod_from_tensor<G>(shift, h, op, "shift");
  const Checked sc = mod_from_tensor<G>(scale, h, op, "scale");
  run<G>(op, h, &delta, &g, sc, sh, eps, outs);
}

template <class G, class Outputs>
void gated_adaln_from_table(const typename G::Tensor& h, const typename G::Tensor& delta,
                            const typename G::Tensor& table, const typename G::Tensor& temb, int64_t gate_chunk,
                            int64_t shift_chunk, double eps, Outputs& outs) {
  const char* op = "gated_residual_adaln_rms_table";
  check_x<G>(h, op);
  const Checked g = mod_from_table<G>(table, temb, gate_chunk, h, op);
  const Checked sh = mod_from_table<G>(table, temb, shift_chunk, h, op);
  const Checked sc = mod_from_table<G>(table, temb, shift_chunk + 1, h, op);
  run<G>(op, h, &delta, &g, sc, sh, eps, outs);
}

}  // namespace khub_kernels::adaln
