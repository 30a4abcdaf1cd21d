/* A native module shaped like a kernel-builder one, without torch: PyInit_<id> references
 * PyModule_Create2 and the library is not linked to libpython. MODULE_ID and MODULE_VALUE come
 * from the build; with NEEDS_SHIM_FUNCTION it also calls that torch C-shim function, as a
 * stable-ABI module built against a newer torch would. */
#define KHUB_CAT2(a, b) a##b
#define KHUB_CAT(a, b) KHUB_CAT2(a, b)

void* PyModule_Create2(void* def, int api_version);

__attribute__((visibility("default"))) void* KHUB_CAT(PyInit_, MODULE_ID)(void) {
  static char module_def[128];
  return PyModule_Create2(module_def, 1013);
}

__attribute__((visibility("default"))) int khub_plain_value(void) { return MODULE_VALUE; }

#ifdef NEEDS_SHIM_FUNCTION
int NEEDS_SHIM_FUNCTION(void* exception, const char** what);

__attribute__((visibility("default"))) int khub_plain_shim_call(void) { return NEEDS_SHIM_FUNCTION(0, 0); }
#endif
