// tvm-ffi binding of the geglu kernel (tvm-ffi<MM> variants): the ops of torch_binding.cpp as C-ABI
// functions over caller-allocated DLPack tensors, on the same torch-free CPU implementation and CUDA
// launcher. `<op>_cpu` in every variant, `<op>_cuda` in CUDA variants; outputs come first.
//   geglu_{cpu,cuda}(out [..., H], x [..., 2H], approximate: bool)   value = first half, gate = second half
//   gelu_tanh_{cpu,cuda}(out, x)
#include <tvm/ffi/tvm_ffi.h>

#include "geglu_args.h"
#include "khub_kernels/tvm_ffi_glue.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/tvm_ffi_cuda_glue.h"
#endif

namespace khub_kernels::geglu {
namespace {

using namespace khub_kernels::ffi_glue;
using tvm::ffi::TensorView;

// The caller's output, taken by run(): x's device and dtype, contiguous, x's shape with the last
// dimension halved when gated.
struct CallerOutput {
  Tensor out;
  bool gated;
  void* take(int, const Tensor& x, const char* op, const char* name) {
    check_output(out, x, op, name);
    const int64_t n = gated ? x.size(-1) / 2 : x.size(-1);
    bool shape_ok = out.dim() == x.dim() && out.size(-1) == n;
    for (int64_t i = 0; shape_ok && i + 1 < x.dim(); ++i) shape_ok = out.size(i) == x.size(i);
    KHUB_FFI_CHECK(shape_ok, ValueError, op, ": ", name, " must have x's shape ", shape_of(x),
                   " with the last dimension ", gated ? "halved" : "kept", " (", n, "), got ", shape_of(out));
    return out.data_ptr();
  }
};

template <Backend B>
void geglu(TensorView out, TensorView x, bool approximate) {
  CallerOutput o{out, true};
  run<Glue<B>>("geglu", x, true, approximate ? Act::GeluTanh : Act::GeluErf, o);
}

template <Backend B>
void gelu_tanh(TensorView out, TensorView x) {
  CallerOutput o{out, false};
  run<Glue<B>>("gelu_tanh", x, false, Act::GeluTanh, o);
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
