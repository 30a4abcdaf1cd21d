// Registration glue of the stable-ABI bindings (torch-stable-abi<MM> variants), the counterpart of
// torch_register.h: KHUB_STABLE_LIBRARY(m) / KHUB_STABLE_LIBRARY_IMPL(key, m) are STABLE_TORCH_LIBRARY
// blocks in namespace TORCH_EXTENSION_NAME, whose kernels are registered boxed (TORCH_BOX).
// Built with -DTORCH_TARGET_VERSION, so only the C shims of that torch version are imported.
#pragma once
#ifndef TORCH_TARGET_VERSION
#error "stable-ABI bindings are built with TORCH_TARGET_VERSION (the oldest torch the variant loads into)"
#endif
#include <torch/csrc/stable/library.h>

#include "khub_kernels/py_extension.h"

#define KHUB_STABLE_LIBRARY_EXPAND(ns, m) STABLE_TORCH_LIBRARY(ns, m)
#define KHUB_STABLE_LIBRARY(m) KHUB_STABLE_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, m)
#define KHUB_STABLE_LIBRARY_IMPL_EXPAND(ns, key, m) STABLE_TORCH_LIBRARY_IMPL(ns, key, m)
#define KHUB_STABLE_LIBRARY_IMPL(key, m) KHUB_STABLE_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, key, m)
