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

#include <optional>

#include "khub_kernels/tvm_ffi_glue.h"
#include "rope3d_args.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/tvm_ffi_cuda_glue.h"
#endif

namespace khub_kernels::rope3d {
namespace {

using namespace khub_kernels::ffi_glue;
using tvm::ffi::Optional;
using tvm::ffi::TensorView;

std::optional<Tensor> optional(const Optional<TensorView>& t) {
  if (!t.has_value()) return std::nullopt;
  return Tensor(*t);
}

const Tensor* opt(const std::optional<Tensor>& t) { return t ? &*t : nullptr; }

template <Backend B>
void apply_rotary_emb(TensorView out, TensorView x, TensorView cos, TensorView sin) {
  CallerOutputs o{{out}};
  rotate_api<Glue<B>>("apply_rotary_emb", x, nullptr, cos, sin, o);
}

template <Backend B>
void apply_rotary_emb_qk(TensorView q_out, TensorView k_out, TensorView q, TensorView k, TensorView cos,
                         TensorView sin) {
  CallerOutputs o{{q_out, k_out}};
  const Tensor kk(k);
  rotate_api<Glue<B>>("apply_rotary_emb_qk", q, &kk, cos, sin, o);
}

template <Backend B>
void apply_rotary_emb_table_qk(TensorView q_out, TensorView k_out, TensorView q, TensorView k, TensorView cos_table,
                               TensorView sin_table, TensorView index) {
  CallerOutputs o{{q_out, k_out}};
  rotate_table<Glue<B>>(q, k, cos_table, sin_table, index, o);
}

template <Backend B>
void apply_rotary_emb_coords_qk(TensorView q_out, TensorView k_out, TensorView q, TensorView k, TensorView coords,
                                TensorView freqs) {
  CallerOutputs o{{q_out, k_out}};
  rotate_coords<Glue<B>>(q, k, coords, freqs, o);
}

template <Backend B>
void rms_norm_rope_table_qk(TensorView q_out, TensorView k_out, TensorView q, TensorView k,
                            Optional<TensorView> q_weight, Optional<TensorView> k_weight, double eps,
                            TensorView cos_table, TensorView sin_table, TensorView index) {
  CallerOutputs o{{q_out, k_out}};
  norm_rotate_table<Glue<B>>(q, k, opt(optional(q_weight)), opt(optional(k_weight)), eps, cos_table, sin_table,
                             index, o);
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
