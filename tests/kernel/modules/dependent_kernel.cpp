// A kernel that depends on another one (kernel-depends) natively: its rms_norm calls
// KHUB_TEST_DEPENDENCY::rms_norm through the dispatcher and scales the result by 3, and at load time
// it records whether that op was already registered, i.e. whether the dependency was loaded first
// (op `dependency_loaded_first() -> bool`). PyInit_<name> as in torch_kernel.cpp.
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <optional>

#define KHUB_STR2(x) #x
#define KHUB_STR(x) KHUB_STR2(x)

namespace {

const char* const kDependencyOp = KHUB_STR(KHUB_TEST_DEPENDENCY) "::rms_norm";
bool dependency_was_there = false;

at::Tensor rms_norm(const at::Tensor& x, const std::optional<at::Tensor>& weight, double eps) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow(kDependencyOp, "")
                             .typed<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double)>();
  return op.call(x, weight, eps).mul(3.0);
}

bool dependency_loaded_first() { return dependency_was_there; }

}  // namespace

#define KHUB_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
#define KHUB_LIBRARY_IMPL_EXPAND(NAME, KEY, MODULE) TORCH_LIBRARY_IMPL(NAME, KEY, MODULE)
#define KHUB_CAT2(a, b) a##b
#define KHUB_CAT(a, b) KHUB_CAT2(a, b)

KHUB_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, m) {
  dependency_was_there = c10::Dispatcher::singleton().findSchema({kDependencyOp, ""}).has_value();
  m.def("rms_norm(Tensor x, Tensor? weight, float eps) -> Tensor");
  m.def("dependency_loaded_first() -> bool", &dependency_loaded_first);
}
KHUB_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CPU, m) { m.impl("rms_norm", &rms_norm); }

extern "C" void* PyModule_Create2(void* def, int api_version);
extern "C" __attribute__((visibility("default"))) void* KHUB_CAT(PyInit_, TORCH_EXTENSION_NAME)() {
  static char module_def[128];
  return PyModule_Create2(module_def, 1013);
}
