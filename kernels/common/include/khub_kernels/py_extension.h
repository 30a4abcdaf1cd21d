// The Python side of a kernel's native module, named TORCH_EXTENSION_NAME (= metadata.id), shared
// by the torch and the stable-ABI bindings (no torch headers):
//  * KHUB_REGISTER_EXTENSION(): PyInit_<id> returning an empty module, so Python can import the file,
//    and the module's own hidden __libc_single_threaded (below).
// The module is not linked to libpython: PyInit_<id> references PyModule_Create2, which Python
// provides when it imports the module and a stub provides in the C++ loader. The structs below
// are CPython's limited-API (abi3) layout of PyModuleDef, declared here so no Python headers
// are needed to build.
#pragma once
#include <cstdint>

#ifndef TORCH_EXTENSION_NAME
#error "TORCH_EXTENSION_NAME must be defined (the variant's metadata.id)"
#endif

#define KHUB_CONCAT_INNER(a, b) a##b
#define KHUB_CONCAT(a, b) KHUB_CONCAT_INNER(a, b)
#define KHUB_STRINGIFY_INNER(x) #x
#define KHUB_STRINGIFY(x) KHUB_STRINGIFY_INNER(x)

extern "C" {
struct khub_py_object {
  intptr_t ob_refcnt;
  void* ob_type;
};
struct khub_py_module_def_base {
  khub_py_object ob_base;
  void* (*m_init)();
  intptr_t m_index;
  void* m_copy;
};
struct khub_py_module_def {
  khub_py_module_def_base m_base;
  const char* m_name;
  const char* m_doc;
  intptr_t m_size;
  void* m_methods;
  void* m_slots;
  void* m_traverse;
  void* m_clear;
  void* m_free;
};
void* PyModule_Create2(khub_py_module_def* def, int api_version);
}

// manylinux_2_28: libstdc++'s __gnu_cxx::__is_single_threaded() reads glibc's __libc_single_threaded
// (GLIBC_2.32) when <sys/single_threaded.h> exists; torch's headers (and the stable
// ABI's torch::stable::Tensor) inline shared_ptr releases into every binding. Each
// module therefore defines its own hidden (non-exported) copy, constant 0 = "threads may exist":
// libstdc++ then always uses atomic refcounts, which is correct, only conservative (torch is
// multi-threaded anyway). Nothing writes it; glibc's own variable is untouched. See docs/kernels.md.
#if __has_include(<sys/single_threaded.h>)
#define KHUB_LIBC_SINGLE_THREADED_DEF() \
  extern "C" {                          \
  __attribute__((visibility("hidden"))) char __libc_single_threaded = 0; \
  }
#else
#define KHUB_LIBC_SINGLE_THREADED_DEF()
#endif

// 3 = PYTHON_ABI_VERSION, what PyModule_Create passes under Py_LIMITED_API.
#define KHUB_REGISTER_EXTENSION()                                                              \
  extern "C" __attribute__((visibility("default"))) void* KHUB_CONCAT(PyInit_, TORCH_EXTENSION_NAME)() { \
    static khub_py_module_def def = {{{1, nullptr}, nullptr, 0, nullptr},                      \
                                     KHUB_STRINGIFY(TORCH_EXTENSION_NAME),                     \
                                     nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr}; \
    return PyModule_Create2(&def, 3);                                                          \
  }                                                                                            \
  KHUB_LIBC_SINGLE_THREADED_DEF()
