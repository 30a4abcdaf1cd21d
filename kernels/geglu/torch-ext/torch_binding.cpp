// Torch binding of the geglu kernel: geglu (diffusers GEGLU, erf or tanh GELU on the second half)
// and gelu_tanh. CPU implementation in every variant, CUDA launcher in cuda variants.
#include <ATen/ops/empty.h>

#include <vector>

#include "geglu_args.h"
#include "op_schemas.h"
#include "khub_kernels/torch_glue.h"
#include "khub_kernels/torch_register.h"
#ifdef KHUB_KERNEL_CUDA
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

// run()'s output, allocated by empty_output.
struct NewOutput {
  bool gated;
  at::Tensor t;
  void* take(int, const at::Tensor& x, const char* op, const char* /*name*/) {
    t = empty_output(op, x, gated);
    return t.data_ptr();
  }
};

at::Tensor call(const char* op, const at::Tensor& x, bool gated, Act act) {
  NewOutput o{gated, {}};
  run<Glue>(op, x, gated, act, o);
  return std::move(o.t);
}

at::Tensor geglu(const at::Tensor& x, bool approximate) {
  return call("geglu", x, true, approximate ? Act::GeluTanh : Act::GeluErf);
}

at::Tensor gelu_tanh(const at::Tensor& x) { return call("gelu_tanh", x, false, Act::GeluTanh); }

// Meta: the output's metadata without running a kernel (torch.compile's fake tensors, shape
// inference), after the checks that need no data; allocated as run() allocates it.
at::Tensor meta(const char* op, const at::Tensor& x, bool gated) {
  check_x_rank<Glue>(x);
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
