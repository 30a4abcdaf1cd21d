// Stable-ABI binding of the geglu kernel (torch-stable-abi<MM> variants): the ops of
// torch_binding.cpp on torch::stable::Tensor, over the same torch-free CPU implementation and CUDA
// launcher. Kernels are registered boxed; failed checks throw std::runtime_error.
#include "geglu.h"
#include "op_schemas.h"
#include "khub_kernels/stable_glue.h"
#include "khub_kernels/stable_register.h"
#ifdef KHUB_KERNEL_CUDA
#include "geglu_launch.h"
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

Tensor run(const char* op, const Tensor& x, bool gated, Act act) {
  check_backend(x, op);
  GegluArgs a;
  a.dtype = dtype_of(x, "x");
  a.x_layout = row_layout(x, "x");
  a.x = x.data_ptr();
  a.gated = gated;
  a.act = act;
  if (gated)
    STD_TORCH_CHECK(x.size(-1) % 2 == 0, op, ": last dimension must be even (value | gate), got ", x.size(-1));
  Tensor out = empty_output(x, gated);
  a.n = out.size(-1);
  a.out = out.data_ptr();
  if (out.numel() == 0) return out;
  if (x.is_cpu()) {
    parallel_rows(a.x_layout.rows, a.n, [&](int64_t b, int64_t e) { geglu_cpu(a, b, e); });
    return out;
  }
#ifdef KHUB_KERNEL_CUDA
  const torch::stable::accelerator::DeviceGuard guard(x.get_device_index());
  const bool vector_ok = a.n % (16 / static_cast<int64_t>(x.element_size())) == 0 && rows_aligned16(x, a.x_layout);
  check_launch(launch_geglu(a, vector_ok, current_stream(x)), op);
  return out;
#else
  STD_TORCH_CHECK(false, op, ": this is a CPU build; no CUDA implementation");
#endif
}

Tensor geglu(const Tensor& x, bool approximate) {
  return run("geglu", x, true, approximate ? Act::GeluTanh : Act::GeluErf);
}

Tensor gelu_tanh(const Tensor& x) { return run("gelu_tanh", x, false, Act::GeluTanh); }

// Meta: the output's metadata without running a kernel, after the checks that need no data (the
// evenness of a symbolic last dimension is left to the real op).
Tensor meta(const Tensor& x, bool gated) {
  dtype_of(x, "x");
  STD_TORCH_CHECK(x.dim() >= 1, "x: expected at least 1 dimension, got a scalar");
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
