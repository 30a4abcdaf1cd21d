// Stable-ABI binding of the geglu kernel (torch-stable-abi<MM> variants): the ops of
// torch_binding.cpp on torch::stable::Tensor, over the same torch-free CPU implementation and CUDA
// launcher. Kernels are registered boxed; failed checks throw std::runtime_error.
#include <optional>

#include "geglu_args.h"
#include "op_schemas.h"
#include "khub_kernels/stable_glue.h"
#include "khub_kernels/stable_register.h"
#ifdef KHUB_KERNEL_CUDA
#include "khub_kernels/stable_cuda_glue.h"
#endif

namespace khub_kernels::geglu {
namespace {

using namespace khub_kernels::stable_glue;

// The op's output for x (at least 1-D): contiguous, x's sizes with the last one halved when gated.
// The halved shape comes from aten::slice (every second column), not from reading the sizes, so it
// stays symbolic under fake tensors and the Meta registrations allocate through it too.
Tensor empty_output(const Tensor& x, bool gated) {
  if (!gated) return empty_output_like(x);
  return empty_output_like(call_aten("aten::slice", "Tensor", x, int64_t{-1}, std::nullopt, std::nullopt, int64_t{2}));
}

// run()'s output: empty_output's, allocated with the sizes read (new_output_like), as the real
// kernels may.
struct NewOutput {
  bool gated;
  std::optional<Tensor> t;
  void* take(int, const Tensor& x, const char* /*op*/, const char* /*name*/) {
    t = new_output_like(x, gated ? std::optional(x.size(x.dim() - 1) / 2) : std::nullopt);
    return t->data_ptr();
  }
};

Tensor call(const char* op, const Tensor& x, bool gated, Act act) {
  NewOutput o{gated, std::nullopt};
  run<Glue>(op, x, gated, act, o);
  return std::move(*o.t);
}

Tensor geglu(const Tensor& x, bool approximate) {
  return call("geglu", x, true, approximate ? Act::GeluTanh : Act::GeluErf);
}

Tensor gelu_tanh(const Tensor& x) { return call("gelu_tanh", x, false, Act::GeluTanh); }

// Meta: the output's metadata without running a kernel, after the checks that need no data (the
// evenness of a symbolic last dimension is left to the real op).
Tensor meta(const Tensor& x, bool gated) {
  check_x_rank<Glue>(x);
  return empty_output(x, gated);
}

Tensor geglu_meta(const Tensor& x, bool) { return meta(x, true); }

Tensor gelu_tanh_meta(const Tensor& x) { return meta(x, false); }

}  // namespace
}  // namespace khub_kernels::geglu

KHUB_STABLE_LIBRARY(m) {
  for (const char* schema : khub_kernels::geglu::kOpSchemas) m.def(schema);
}

KHUB_STABLE_LIBRARY_IMPL(CPU, m) {
  m.impl("geglu", TORCH_BOX(&khub_kernels::geglu::geglu));
  m.impl("gelu_tanh", TORCH_BOX(&khub_kernels::geglu::gelu_tanh));
}

#ifdef KHUB_KERNEL_CUDA
KHUB_STABLE_LIBRARY_IMPL(CUDA, m) {
  m.impl("geglu", TORCH_BOX(&khub_kernels::geglu::geglu));
  m.impl("gelu_tanh", TORCH_BOX(&khub_kernels::geglu::gelu_tanh));
}
#endif

KHUB_STABLE_LIBRARY_IMPL(Meta, m) {
  m.impl("geglu", TORCH_BOX(&khub_kernels::geglu::geglu_meta));
  m.impl("gelu_tanh", TORCH_BOX(&khub_kernels::geglu::gelu_tanh_meta));
}

KHUB_REGISTER_EXTENSION()
