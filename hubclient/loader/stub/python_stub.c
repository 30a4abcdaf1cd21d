/* Stand-ins for the Python C-API symbols kernel modules reference from PyInit_<id> and friends,
 * for processes without Python. khub never calls PyInit_*, so none of these run; each returns the
 * "failure" value of the real function in case something does call it. */
#include <stddef.h>

#define KHUB_STUB __attribute__((visibility("default")))

KHUB_STUB void* PyModule_Create2(void* def, int api) { (void)def; (void)api; return NULL; }
KHUB_STUB void* PyModuleDef_Init(void* def) { (void)def; return NULL; }
KHUB_STUB void* PyModule_FromDefAndSpec2(void* def, void* spec, int api) { (void)def; (void)spec; (void)api; return NULL; }
KHUB_STUB int PyModule_ExecDef(void* m, void* def) { (void)m; (void)def; return -1; }
KHUB_STUB int PyModule_AddObject(void* m, const char* n, void* v) { (void)m; (void)n; (void)v; return -1; }
KHUB_STUB int PyModule_AddObjectRef(void* m, const char* n, void* v) { (void)m; (void)n; (void)v; return -1; }
KHUB_STUB int PyModule_AddIntConstant(void* m, const char* n, long v) { (void)m; (void)n; (void)v; return -1; }
KHUB_STUB int PyModule_AddStringConstant(void* m, const char* n, const char* v) { (void)m; (void)n; (void)v; return -1; }
KHUB_STUB void PyErr_SetString(void* t, const char* m) { (void)t; (void)m; }
KHUB_STUB void* PyErr_Occurred(void) { return NULL; }
KHUB_STUB void PyErr_Clear(void) {}
KHUB_STUB void Py_IncRef(void* o) { (void)o; }
KHUB_STUB void Py_DecRef(void* o) { (void)o; }
KHUB_STUB void _Py_Dealloc(void* o) { (void)o; }
KHUB_STUB void* PyLong_FromLong(long v) { (void)v; return NULL; }
KHUB_STUB void* PyUnicode_FromString(const char* s) { (void)s; return NULL; }
KHUB_STUB void* Py_BuildValue(const char* f, ...) { (void)f; return NULL; }
KHUB_STUB int PyArg_ParseTuple(void* a, const char* f, ...) { (void)a; (void)f; return 0; }

/* Data symbols: exception types and singletons, referenced by address only. */
KHUB_STUB void* PyExc_RuntimeError = NULL;
KHUB_STUB void* PyExc_ImportError = NULL;
KHUB_STUB void* PyExc_TypeError = NULL;
KHUB_STUB void* PyExc_ValueError = NULL;
KHUB_STUB char _Py_NoneStruct[64];
KHUB_STUB char _Py_TrueStruct[64];
KHUB_STUB char _Py_FalseStruct[64];

/* Marks the stub so khub can tell it from a real interpreter. */
KHUB_STUB int khub_python_stub_marker = 1;
