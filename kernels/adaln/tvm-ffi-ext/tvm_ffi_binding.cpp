// tvm-ffi binding of the adaln kernel (tvm-ffi<MM> variants): the ops of torch_binding.cpp as C-ABI
// functions over caller-allocated DLPack tensors, on the same torch-free CPU implementation and CUDA
// launcher. `<op>_cpu` in every variant, `<op>_cuda` in CUDA variants; outputs come first.
//   adaln_rms_{cpu,cuda}(out, x, scale, shift, eps)
//   adaln_rms_table_{cpu,cuda}(out, x, table, temb, shift_chunk: int, eps)
//   gated_residual_adaln_rms_{cpu,cuda}(out, h_out, h, delta, gate, scale, shift, eps)
//   gated_residual_adaln_rms_table_{cpu,cuda}(out, h_out, h, delta, table, temb, gate_chunk, shift_chunk, eps)
#include <tvm/ffi/tvm_ffi.h>

#include "adaln_args.h"
#include "khub_kernels/tvm_ffi_glue.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/tvm_ffi_cuda_glue.h"
#endif

namespace khub_kernels::adaln {
namespace {

using namespace khub_kernels::ffi_glue;
using tvm::ffi::TensorView;

template <Backend B>
void adaln_rms(TensorView out, TensorView x, TensorView scale, TensorView shift, double eps) {
  CallerOutputs o{{out}};
  adaln_from_tensors<Glue<B>>(x, scale, shift, eps, o);
}

template <Backend B>
void adaln_rms_table(TensorView out, TensorView x, TensorView table, TensorView temb, int64_t shift_chunk,
                     double eps) {
  CallerOutputs o{{out}};
  adaln_from_table<Glue<B>>(x, table, temb, shift_chunk, eps, o);
}

template <Backend B>
void gated_residual_adaln_rms(TensorView out, TensorView h_out, TensorView h, TensorView delta, TensorView gate,
                              TensorView scale, TensorView shift, double eps) {
  CallerOutputs o{{out, h_out}};
  gated_adaln_from_tensors<Glue<B>>(h, delta, gate, scale, shift, eps, o);
}

template <Backend B>
void gated_residual_adaln_rms_table(TensorView out, TensorView h_out, TensorView h, TensorView delta,
                                    TensorView table, TensorView temb, int64_t gate_chunk, int64_t shift_chunk,
                                    double eps) {
  CallerOutputs o{{out, h_out}};
  gated_adaln_from_table<Glue<B>>(h, delta, table, temb, gate_chunk, shift_chunk, eps, o);
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
