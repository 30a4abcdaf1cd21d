// tvm-ffi binding of the geglu kernel (tvm-ffi<MM> variants): the ops of torch_binding.cpp as C-ABI
// functions over caller-allocated DLPack tensors, on the same torch-free CPU implementation and CUDA
// launcher. `<op>_cpu` in every variant, `<op>_cuda` in CUDA variants; outputs come first.
//   geglu_{cpu,cuda}(out [..., H], x [..., 2H], approximate: bool)   value = first half, gate = second half
//   gelu_tanh_{cpu,cuda}(out, x)
#include <tvm/ffi/tvm_ffi.h>

#include "geglu.h"
#include "khub_kernels/tvm_ffi_glue.h"
#ifdef KHUB_KERNEL_CUDA
#include "geglu_launch.h"
#include "khub_kernels/tvm_ffi_cuda_glue.h"
#endif

namespace khub_kernels::geglu {
namespace {

using namespace khub_kernels::ffi_glue;
using tvm::ffi::TensorView;

void run(Backend backend, const char* op, const Tensor& out, const Tensor& x, bool gated, Act act) {
  check_backend(x, backend, op);
  GegluArgs a;
  a.dtype = dtype_of(x, "x");
  a.x_layout = row_layout(x, "x");
  a.x = x.data_ptr();
  a.gated = gated;
  a.act = act;
  if (gated)
    KHUB_FFI_CHECK(x.size(-1) % 2 == 0, ValueError, op, ": last dimension must be even (value | gate), got ",
                   x.size(-1));
  a.n = gated ? x.size(-1) / 2 : x.size(-1);
  check_output(out, x, op, "out");
  bool shape_ok = out.dim() == x.dim() && out.size(-1) == a.n;
  for (int64_t i = 0; shape_ok && i + 1 < x.dim(); ++i) shape_ok = out.size(i) == x.size(i);
  KHUB_FFI_CHECK(shape_ok, ValueError, op, ": out must have x's shape ", shape_of(x), " with the last dimension ",
                 gated ? "halved" : "kept", " (", a.n, "), got ", shape_of(out));
  a.out = out.data_ptr();
  if (out.numel() == 0) return;
  if (backend == Backend::Cpu) {
    parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { geglu_cpu(a, b, e); });
    return;
  }
#ifdef KHUB_KERNEL_CUDA
  const DeviceGuard guard(x.device_index());
  const bool vector_ok = a.n % (16 / x.element_size()) == 0 && rows_aligned16(x, a.x_layout);
  check_launch(launch_geglu(a, vector_ok, current_stream(x)), op);
#endif
}

template <Backend B>
void geglu(TensorView out, TensorView x, bool approximate) {
  run(B, "geglu", out, x, true, approximate ? Act::GeluTanh : Act::GeluErf);
}

template <Backend B>
void gelu_tanh(TensorView out, TensorView x) {
  run(B, "gelu_tanh", out, x, false, Act::GeluTanh);
}

}  // namespace
}  // namespace khub_kernels::geglu

using khub_kernels::ffi_glue::Backend;

TVM_FFI_DLL_EXPORT_TYPED_FUNC(geglu_cpu, khub_kernels::geglu::geglu<Backend::Cpu>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gelu_tanh_cpu, khub_kernels::geglu::gelu_tanh<Backend::Cpu>);
#ifdef KHUB_KERNEL_CUDA
TVM_FFI_DLL_EXPORT_TYPED_FUNC(geglu_cuda, khub_kernels::geglu::geglu<Backend::Cuda>);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(gelu_tanh_cuda, khub_kernels::geglu::gelu_tanh<Backend::Cuda>);
#endif
