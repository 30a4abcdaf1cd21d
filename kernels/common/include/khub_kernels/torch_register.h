// Registration glue for a kernel's native module, named TORCH_EXTENSION_NAME (= metadata.id):
// KHUB_LIBRARY(m) / KHUB_LIBRARY_IMPL(key, m): TORCH_LIBRARY blocks in namespace TORCH_EXTENSION_NAME.
// KHUB_REGISTER_EXTENSION() comes from py_extension.h (shared with the stable-ABI bindings).
#pragma once
#include <torch/library.h>

#include "khub_kernels/py_extension.h"

#define KHUB_LIBRARY_EXPAND(ns, m) TORCH_LIBRARY(ns, m)
#define KHUB_LIBRARY(m) KHUB_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, m)
#define KHUB_LIBRARY_IMPL_EXPAND(ns, key, m) TORCH_LIBRARY_IMPL(ns, key, m)
#define KHUB_LIBRARY_IMPL(key, m) KHUB_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, key, m)
