// The geglu ops' argument checks and run, written once for the three bindings (torch_binding.cpp,
// torch_binding_stable.cpp, tvm_ffi_binding.cpp) over their glue policy G (khub_kernels/arg_checks.h).
// A binding converts its arguments, calls run<G> with the output it allocates or the caller gave, and
// registers or exports the ops. No torch and no tvm-ffi here.
#pragma once
#include <cstdint>

#include "geglu.h"
#include "khub_kernels/arg_checks.h"
#ifdef KHUB_KERNEL_CUDA
#include "geglu_launch.h"
#endif

namespace khub_kernels::geglu {

// x must be at least 1-D in a supported dtype: the checks that need no data, which the Meta
// registrations run (the evenness of a symbolic last dimension is the real op's to check).
template <class G>
void check_x_rank(const typename G::Tensor& x) {
  G::dtype_of(x, "x");
  KHUB_CHECK_VALUE(G, x.dim() >= 1, "x: expected at least 1 dimension, got a scalar");
}

// geglu (gated: value | gate, the halves of x's last dimension, which must be even) or gelu_tanh of x
// into outs.take(0, x, op, "out"): x's sizes, the last one halved when gated. The torch bindings
// allocate it there, the tvm-ffi binding checks the caller's, after the input checks as it always did.
template <class G, class Outputs>
void run(const char* op, const typename G::Tensor& x, bool gated, Act act, Outputs& outs) {
  G::check_backend(x, op);
  GegluArgs a;
  a.dtype = G::dtype_of(x, "x");
  a.x_layout = G::row_layout(x, "x");
  a.x = x.data_ptr();
  a.gated = gated;
  a.act = act;
  if (gated)
    KHUB_CHECK_VALUE(G, x.size(-1) % 2 == 0, op, ": last dimension must be even (value | gate), got ", x.size(-1));
  a.n = gated ? x.size(-1) / 2 : x.size(-1);
  a.out = outs.take(0, x, op, "out");
  if (x.numel() == 0) return;
  if (x.is_cpu()) {
    G::parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { geglu_cpu(a, b, e); });
    return;
  }
#ifdef KHUB_KERNEL_CUDA
  const typename G::Cuda::DeviceGuard guard(x);
  const bool vector_ok =
      a.n % (16 / static_cast<int64_t>(x.element_size())) == 0 && G::rows_aligned16(x, a.x_layout);
  G::Cuda::check_launch(launch_geglu(a, vector_ok, G::Cuda::current_stream(x)), op);
#else
  G::fail_value(KHUB_CHECK_SITE(), op, ": this is a CPU build; no CUDA implementation");
#endif
}

}  // namespace khub_kernels::geglu
