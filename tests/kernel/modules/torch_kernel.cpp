// A tiny kernel in kernel-builder form for the torch tests: TORCH_LIBRARY in namespace
// TORCH_EXTENSION_NAME with rms_norm(Tensor x, Tensor? weight, float eps) -> Tensor (CPU, float32),
// scaled by KHUB_TEST_SCALE so two builds can be told apart, plus a REGISTER_EXTENSION-style
// PyInit_<name> that references PyModule_Create2 without linking libpython.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include <cmath>
#include <optional>

namespace {

at::Tensor rms_norm(const at::Tensor& x, const std::optional<at::Tensor>& weight, double eps) {
  TORCH_CHECK(x.scalar_type() == at::kFloat, "rms_norm: expected float32, got ", x.scalar_type());
  TORCH_CHECK(x.dim() >= 1, "rms_norm: expected at least one dimension");
  at::Tensor in = x.contiguous();
  at::Tensor out = at::empty_like(in);
  const int64_t n = in.size(-1);
  const int64_t rows = n == 0 ? 0 : in.numel() / n;
  std::optional<at::Tensor> w;
  if (weight) {
    TORCH_CHECK(weight->numel() == n, "rms_norm: weight has ", weight->numel(), " elements, expected ", n);
    w = weight->contiguous();
  }
  const float* src = in.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += double(src[r * n + i]) * src[r * n + i];
    const double inv = 1.0 / std::sqrt(sum / double(n) + eps);
    for (int64_t i = 0; i < n; ++i) {
      double v = src[r * n + i] * inv * KHUB_TEST_SCALE;
      if (w) v *= w->data_ptr<float>()[i];
      dst[r * n + i] = static_cast<float>(v);
    }
  }
  return out;
}

}  // namespace

#define KHUB_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
#define KHUB_LIBRARY_IMPL_EXPAND(NAME, KEY, MODULE) TORCH_LIBRARY_IMPL(NAME, KEY, MODULE)
#define KHUB_CAT2(a, b) a##b
#define KHUB_CAT(a, b) KHUB_CAT2(a, b)

KHUB_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, m) { m.def("rms_norm(Tensor x, Tensor? weight, float eps) -> Tensor"); }
KHUB_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CPU, m) { m.impl("rms_norm", &rms_norm); }

extern "C" void* PyModule_Create2(void* def, int api_version);
extern "C" __attribute__((visibility("default"))) void* KHUB_CAT(PyInit_, TORCH_EXTENSION_NAME)() {
  static char module_def[128];
  return PyModule_Create2(module_def, 1013);
}
