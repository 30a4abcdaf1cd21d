// Torch binding of the geglu kernel: geglu (diffusers GEGLU, erf or tanh GELU on the second half)
// and gelu_tanh. CPU implementation in every variant, CUDA launcher in cuda variants.
#include <ATen/ops/empty.h>

#include <vector>

#include "geglu.h"
#include "op_schemas.h"
#include "khub_kernels/torch_glue.h"
#include "khub_kernels/torch_register.h"
#ifdef KHUB_KERNEL_CUDA
#include "geglu_launch.h"
#include "khub_kernels/torch_cuda_glue.h"
#endif

namespace khub_kernels::geglu {
namespace {

using namespace khub_kernels::glue;

// The op's output for x (at least 1-D): contiguous, x's sizes with the last one halved when gated
// (which needs it even). Sizes stay symbolic, so the Meta registrations allocate through it too.
at::Tensor empty_output(const char* op, const at::Tensor& x, bool gated) {
  std::vector<c10::SymInt> shape(x.sym_sizes().begin(), x.sym_sizes().end());
  if (gated) {
    TORCH_SYM_CHECK((shape.back() % 2).sym_eq(0), op, ": last dimension must be even (value | gate), got ",
                    shape.back());
    shape.back() = shape.back() / 2;
  }
  return at::empty_symint(shape, x.options().memory_format(at::MemoryFormat::Contiguous));
}

at::Tensor run(const char* op, const at::Tensor& x, bool gated, Act act) {
  check_backend(x, op);
  GegluArgs a;
  a.dtype = dtype_of(x, "x");
  a.x_layout = row_layout(x, "x");
  a.x = x.data_ptr();
  a.gated = gated;
  a.act = act;
  at::Tensor out = empty_output(op, x, gated);
  a.n = out.size(-1);
  a.out = out.data_ptr();
  if (out.numel() == 0) return out;
  if (x.is_cpu()) {
    parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { geglu_cpu(a, b, e); });
    return out;
  }
#ifdef KHUB_KERNEL_CUDA
  const c10::cuda::CUDAGuard guard(x.device());
  const bool vector_ok = a.n % (16 / x.element_size()) == 0 && rows_aligned16(x, a.x_layout);
  check_launch(launch_geglu(a, vector_ok, current_stream(x)), op);
  return out;
#else
  TORCH_CHECK(false, op, ": this is a CPU build; no CUDA implementation");
#endif
}

at::Tensor geglu(const at::Tensor& x, bool approximate) {
  return run("geglu", x, true, approximate ? Act::GeluTanh : Act::GeluErf);
}

at::Tensor gelu_tanh(const at::Tensor& x) { return run("gelu_tanh", x, false, Act::GeluTanh); }

// Meta: the output's metadata without running a kernel (torch.compile's fake tensors, shape
// inference), after the checks that need no data; allocated as run() allocates it.
at::Tensor meta(const char* op, const at::Tensor& x, bool gated) {
  dtype_of(x, "x");
  TORCH_CHECK(x.dim() >= 1, "x: expected at least 1 dimension, got a scalar");
  return empty_output(op, x, gated);
}

at::Tensor geglu_meta(const at::Tensor& x, bool) { return meta("geglu", x, true); }

at::Tensor gelu_tanh_meta(const at::Tensor& x) { return meta("gelu_tanh", x, false); }

}  // namespace
}  // namespace khub_kernels::geglu

KHUB_LIBRARY(m) {
  for (const char* schema : khub_kernels::geglu::kOpSchemas) m.def(schema);
}

KHUB_LIBRARY_IMPL(CPU, m) {
  m.impl("geglu", &khub_kernels::geglu::geglu);
  m.impl("gelu_tanh", &khub_kernels::geglu::gelu_tanh);
}

#ifdef KHUB_KERNEL_CUDA
KHUB_LIBRARY_IMPL(CUDA, m) {
  m.impl("geglu", &khub_kernels::geglu::geglu);
  m.impl("gelu_tanh", &khub_kernels::geglu::gelu_tanh);
}
#endif

KHUB_LIBRARY_IMPL(Meta, m) {
  m.impl("geglu", &khub_kernels::geglu::geglu_meta);
  m.impl("gelu_tanh", &khub_kernels::geglu::gelu_tanh_meta);
}

KHUB_REGISTER_EXTENSION()
