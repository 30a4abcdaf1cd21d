// tvm-ffi binding of the adaln kernel (tvm-ffi<MM> variants): the ops of torch_binding.cpp as C-ABI
// functions over caller-allocated DLPack tensors, on the same torch-free CPU implementation and CUDA
// launcher. `<op>_cpu` in every variant, `<op>_cuda` in CUDA variants; outputs come first.
//   adaln_rms_{cpu,cuda}(out, x, scale, shift, eps)
//   adaln_rms_table_{cpu,cuda}(out, x, table, temb, shift_chunk: int, eps)
//   gated_residual_adaln_rms_{cpu,cuda}(out, h_out, h, delta, gate, scale, shift, eps)
//   gated_residual_adaln_rms_table_{cpu,cuda}(out, h_out, h, delta, table, temb, gate_chunk, shift_chunk, eps)
#include <tvm/ffi/tvm_ffi.h>

#include "adaln.h"
#include "khub_kernels/tvm_ffi_glue.h"
#ifdef KHUB_KERNEL_CUDA
#include "adaln_launch.h"
#include "khub_kernels/tvm_ffi_cuda_glue.h"
#endif

namespace khub_kernels::adaln {
namespace {

using namespace khub_kernels::ffi_glue;
using tvm::ffi::TensorView;

struct Checked {
  ModSource src;
  bool aligned;
};

bool mod_aligned(const ModSource& m, int64_t es) {
  return aligned16(m.base) && (!m.table || aligned16(m.table)) && (m.stride_b * es) % 16 == 0 &&
         (m.stride_s * es) % 16 == 0;
}

// scale / shift / gate given as a tensor [B or 1, S or 1, D].
Checked mod_from_tensor(const Tensor& t, const Tensor& x, const char* op, const char* name) {
  check_device(t, x, name);
  check_same_dtype(t, x, op, name);
  KHUB_FFI_CHECK(t.dim() == 3 && (t.size(0) == 1 || t.size(0) == x.size(0)) &&
                     (t.size(1) == 1 || t.size(1) == x.size(1)) && t.size(2) == x.size(2),
                 ValueError, op, ": ", name, " must have shape [B or 1, S or 1, D] = [", x.size(0), " or 1, ",
                 x.size(1), " or 1, ", x.size(2), "], got ", shape_of(t));
  check_last_contiguous(t, name);
  ModSource m;
  m.base = t.data_ptr();
  m.stride_b = t.size(0) == 1 ? 0 : t.stride(0);
  m.stride_s = t.size(1) == 1 ? 0 : t.stride(1);
  return {m, mod_aligned(m, t.element_size())};
}

// chunk c of table [K, D] + temb [B or 1, T, K * D] (T = 1 or S).
Checked mod_from_table(const Tensor& table, const Tensor& temb, int64_t chunk, const Tensor& x, const char* op) {
  check_device(table, x, "table");
  check_device(temb, x, "temb");
  KHUB_FFI_CHECK(same_dtype(table.dtype(), x.dtype()) && same_dtype(temb.dtype(), x.dtype()), TypeError, op,
                 ": table and temb dtypes must equal x dtype ", dtype_name(x.dtype()), ", got ",
                 dtype_name(table.dtype()), " and ", dtype_name(temb.dtype()));
  const int64_t d = x.size(2);
  KHUB_FFI_CHECK(table.dim() == 2 && table.size(1) == d, ValueError, op, ": table must have shape [K, ", d,
                 "], got ", shape_of(table));
  const int64_t k = table.size(0);
  KHUB_FFI_CHECK(temb.dim() == 3 && (temb.size(0) == 1 || temb.size(0) == x.size(0)) &&
                     (temb.size(1) == 1 || temb.size(1) == x.size(1)) && temb.size(2) == k * d,
                 ValueError, op, ": temb must have shape [B or 1, 1 or S, K*D] = [", x.size(0), ", 1 or ", x.size(1),
                 ", ", k * d, "], got ", shape_of(temb));
  KHUB_FFI_CHECK(chunk >= 0 && chunk < k, ValueError, op, ": chunk ", chunk, " out of range for a table of ", k,
                 " rows");
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

// x (or h) must be [B, S, D] in a supported dtype on the function's backend.
void check_x(const Tensor& x, Backend backend, const char* op) {
  check_backend(x, backend, op);
  KHUB_FFI_CHECK(x.dim() == 3, ValueError, op, ": x must have shape [B, S, D], got a tensor of ", x.dim(),
                 " dimensions");
  dtype_of(x, "x");
}

// adaln of x into out (after the gated residual when delta is given; h_new goes to h_out).
void run(Backend backend, const char* op, const Tensor& out, const Tensor& x, const Tensor* h_out,
         const Tensor* delta, const Checked* gate, const Checked& scale, const Checked& shift, double eps) {
  AdaLnArgs a;
  a.dtype = dtype_of(x, "x");
  a.x = x.data_ptr();
  a.x_layout = row_layout(x, "x");
  a.n = x.size(2);
  a.eps = static_cast<float>(eps);
  a.scale = scale.src;
  a.shift = shift.src;
  bool vector_ok = scale.aligned && shift.aligned && rows_aligned16(x, a.x_layout);
  KHUB_FFI_CHECK(eps >= 0.0, ValueError, op, ": eps must be >= 0, got ", eps);
  check_output(out, x, op, "out");
  check_output_shape(out, x, op, "out");
  a.out = out.data_ptr();
  if (delta) {
    check_device(*delta, x, "delta");
    KHUB_FFI_CHECK(same_dtype(delta->dtype(), x.dtype()) && same_sizes(*delta, x), ValueError, op,
                   ": delta must match h in dtype and shape (", dtype_name(x.dtype()), " ", shape_of(x), "), got ",
                   dtype_name(delta->dtype()), " ", shape_of(*delta));
    a.delta = delta->data_ptr();
    a.delta_layout = row_layout(*delta, "delta");
    a.gate = gate->src;
    vector_ok = vector_ok && gate->aligned && rows_aligned16(*delta, a.delta_layout);
    check_output(*h_out, x, op, "h_out");
    check_output_shape(*h_out, x, op, "h_out");
    a.h_out = h_out->data_ptr();
  }
  if (out.numel() == 0) return;
  if (backend == Backend::Cpu) {
    parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { adaln_cpu(a, b, e); });
    return;
  }
#ifdef KHUB_KERNEL_CUDA
  const DeviceGuard guard(x.device_index());
  vector_ok = vector_ok && a.n % (16 / x.element_size()) == 0;
  check_launch(launch_adaln(a, vector_ok, current_stream(x)), op);
#else
  (void)vector_ok;
#endif
}

template <Backend B>
void adaln_rms(TensorView out, TensorView xv, TensorView scale, TensorView shift, double eps) {
  const char* op = "adaln_rms";
  const Tensor x(xv);
  check_x(x, B, op);
  run(B, op, out, x, nullptr, nullptr, nullptr, mod_from_tensor(scale, x, op, "scale"),
      mod_from_tensor(shift, x, op, "shift"), eps);
}

template <Backend B>
void adaln_rms_table(TensorView out, TensorView xv, TensorView table, TensorView temb, int64_t shift_chunk,
                     double eps) {
  const char* op = "adaln_rms_table";
  const Tensor x(xv);
  check_x(x, B, op);
  run(B, op, out, x, nullptr, nullptr, nullptr, mod_from_table(table, temb, shift_chunk + 1, x, op),
      mod_from_table(table, temb, shift_chunk, x, op), eps);
}

template <Backend B>
void gated_residual_adaln_rms(TensorView out, TensorView h_out, TensorView hv, TensorView delta, TensorView gate,
                              TensorView scale, TensorView shift, double eps) {
  const char* op = "gated_residual_adaln_rms";
  const Tensor h(hv), d(delta), ho(h_out);
  check_x(h, B, op);
  const Checked g = mod_from_tensor(gate, h, op, "gate");
  run(B, op, out, h, &ho, &d, &g, mod_from_tensor(scale, h, op, "scale"), mod_from_tensor(shift, h, op, "shift"),
      eps);
}

template <Backend B>
void gated_residual_adaln_rms_table(TensorView out, TensorView h_out, TensorView hv, TensorView delta,
                                    TensorView table, TensorView temb, int64_t gate_chunk, int64_t shift_chunk,
                                    double eps) {
  const char* op = "gated_residual_adaln_rms_table";
  const Tensor h(hv), d(delta), ho(h_out);
  check_x(h, B, op);
  const Checked g = mod_from_table(table, temb, gate_chunk, h, op);
  run(B, op, out, h, &ho, &d, &g, mod_from_table(table, temb, shift_chunk + 1, h, op),
      mod_from_table(table, temb, shift_chunk, h, op), eps);
}

}  // namespace
}  // namespace khub_kernels::adaln

namespace ada = khub_kernels::adaln;
using khub_kernels::ffi_glue::Backend;

TVM_FFI_DLL_EXPORT_TYPED_FUNC(adaln_rms_cpu, ada::adaln_rms<Backend::Cpu>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(adaln_rms_table_cpu, ada::adaln_rms_table<Backend::Cpu>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gated_residual_adaln_rms_cpu, ada::gated_residual_adaln_rms<Backend::Cpu>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gated_residual_adaln_rms_table_cpu, ada::gated_residual_adaln_rms_table<Backend::Cpu>);
#ifdef KHUB_KERNEL_CUDA
TVM_FFI_DLL_EXPORT_TYPED_FUNC(adaln_rms_cuda, ada::adaln_rms<Backend::Cuda>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(adaln_rms_table_cuda, ada::adaln_rms_table<Backend::Cuda>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gated_residual_adaln_rms_cuda, ada::gated_residual_adaln_rms<Backend::Cuda>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gated_residual_adaln_rms_table_cuda, ada::gated_residual_adaln_rms_table<Backend::Cuda>);
#endif
