// The argument checks a kernel's three bindings share: each kernel's <name>_cpu/<name>_args.h writes
// them once as templates over a glue policy G, the struct `Glue` of torch_glue.h, stable_glue.h and
// tvm_ffi_glue.h (`Glue<Backend>` there). G gives the tensor type (G::Tensor), the errors
// (G::fail_value, G::fail_type: tvm-ffi's ValueError and TypeError, one c10::Error or
// std::runtime_error for the torch builds), dtype comparison and naming, shapes as the binding prints
// them, the glue's helpers (check_device, row_layout, parallel_rows, ...) and, in CUDA builds, G::Cuda
// (the *_cuda_glue.h struct: device guard, current stream, launch check). No torch and no tvm-ffi here,
// so every binding can include it.
#pragma once
#include <cstdint>

namespace khub_kernels {

// Where a shared check failed. The glue's error carries it as TORCH_CHECK, STD_TORCH_CHECK and
// TVM_FFI_THROW carry their own call site, so a message points at the rule, not at the glue.
struct CheckSite {
  const char* func;
  const char* file;
  uint32_t line;
};

}  // namespace khub_kernels

#define KHUB_CHECK_SITE() \
  ::khub_kernels::CheckSite { __func__, __FILE__, static_cast<uint32_t>(__LINE__) }

// Unless cond holds, fails through G with the message parts (evaluated only then): KHUB_CHECK_VALUE
// for shapes, values and devices (tvm-ffi: ValueError), KHUB_CHECK_TYPE for dtypes (TypeError).
#define KHUB_CHECK_VALUE(G, cond, ...)                                  \
  do {                                                                  \
    if (!(cond)) [[unlikely]] G::fail_value(KHUB_CHECK_SITE(), __VA_ARGS__); \
  } while (0)

#define KHUB_CHECK_TYPE(G, cond, ...)                                  \
  do {                                                                 \
    if (!(cond)) [[unlikely]] G::fail_type(KHUB_CHECK_SITE(), __VA_ARGS__); \
  } while (0)
