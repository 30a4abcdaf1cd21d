// The rmsnorm ops' argument checks and run, written once for the three bindings (torch_binding.cpp,
// torch_binding_stable.cpp, tvm_ffi_binding.cpp) over their glue policy G (khub_kernels/arg_checks.h).
// A binding converts its arguments, calls run<G> with the outputs it allocates or the caller gave, and
// registers or exports the ops. No torch and no tvm-ffi here.
#pragma once
#include <cstdint>
#include <string_view>

#include "khub_kernels/arg_checks.h"
#include "rmsnorm.h"
#ifdef KHUB_KERNEL_CUDA
#include "rmsnorm_launch.h"
#endif

namespace khub_kernels::rmsnorm {

template <class G>
Rounding parse_rounding(std::string_view s) {
  if (s == "fused") return Rounding::Fused;
  if (s == "qwen3") return Rounding::Qwen3;
  if (s == "diffusers") return Rounding::Diffusers;
  G::fail_value(KHUB_CHECK_SITE(), "rms_norm: unknown rounding convention '", s,
                "' (expected fused, qwen3 or diffusers)");
}

// rms_norm of x into output 0 of outs, after the fused add when residual is given (the sum goes to
// output 1). outs.take(i, like, op, name) returns where output i goes: the torch bindings allocate it
// there, the tvm-ffi binding checks the caller's. It is taken where the tvm-ffi binding has always
// checked it, so each binding still reports the first bad argument it did.
template <class G, class Outputs>
void run(const char* op, const typename G::Tensor& x, const typename G::Tensor* residual,
         const typename G::Tensor* weight, double eps, Rounding rounding, Outputs& outs) {
  G::check_backend(x, op);
  RmsNormArgs a;
  a.dtype = G::dtype_of(x, "x");
  a.x = x.data_ptr();
  // A row is only its position in x and out: one block of rows where the strides allow it.
  a.x_layout = as_one_block(G::row_layout(x, "x"));
  a.n = x.size(-1);
  a.eps = static_cast<float>(eps);
  a.rounding = rounding;
  KHUB_CHECK_VALUE(G, eps >= 0.0, op, ": eps must be >= 0, got ", eps);
  a.out = outs.take(0, x, op, "out");
  if (residual) {
    G::check_device(*residual, x, "residual");
    KHUB_CHECK_TYPE(G, G::same_dtype(*residual, x), op, ": residual dtype ", G::dtype_name(*residual),
                    " must equal x dtype ", G::dtype_name(x));
    KHUB_CHECK_VALUE(G, G::same_sizes(*residual, x), op, ": residual shape ", G::shape(*residual),
                     " must equal x shape ", G::shape(x));
    a.residual = residual->data_ptr();
    a.residual_layout = as_one_block(G::row_layout(*residual, "residual"));
    a.residual_out = outs.take(1, x, op, "residual_out");
  }
  a.weight_dtype = a.dtype;
  if (weight) {
    const auto& w = *weight;
    G::check_device(w, x, "weight");
    KHUB_CHECK_VALUE(G, w.dim() == 1 && w.size(0) == a.n, op, ": weight must have shape [", a.n, "], got ",
                     G::shape(w));
    KHUB_CHECK_TYPE(G, G::same_dtype(w, x) || G::is_float32(w), op, ": weight dtype ", G::dtype_name(w),
                    " must equal x dtype ", G::dtype_name(x), " or be float32");
    G::check_last_contiguous(w, "weight");
    a.weight = w.data_ptr();
    a.weight_dtype = G::dtype_of(w, "weight");
  }
  if (x.numel() == 0) return;
  if (x.is_cpu()) {
    G::parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { rms_norm_cpu(a, b, e); });
    return;
  }
#ifdef KHUB_KERNEL_CUDA
  const typename G::Cuda::DeviceGuard guard(x);
  const int64_t vec = 16 / static_cast<int64_t>(x.element_size());
  bool vector_ok = a.n % vec == 0 && G::rows_aligned16(x, a.x_layout);
  if (residual) vector_ok = vector_ok && G::rows_aligned16(*residual, a.residual_layout);
  if (weight) vector_ok = vector_ok && G::aligned16(a.weight);
  G::Cuda::check_launch(launch_rms_norm(a, vector_ok, G::Cuda::current_stream(x)), op);
#else
  G::fail_value(KHUB_CHECK_SITE(), op, ": this is a CPU build; no CUDA implementation");
#endif
}

}  // namespace khub_kernels::rmsnorm
