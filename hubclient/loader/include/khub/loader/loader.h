#pragma once
// Loads a kernel's native module into a process that has no Python.
// Kernel modules export PyInit_<id>, which references Python C-API symbols (PyModule_Create2). When
// the process has no Python, a tiny stub library defining those symbols (never called) is loaded
// globally once; then the module is dlopened with RTLD_NOW | RTLD_LOCAL, so a module linked with
// -z now loads too and unresolved symbols fail at load time rather than at a later call.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"

namespace khub::loader {

struct LoadedModule {
  std::string id;               // metadata.id = .so stem = op namespace
  std::filesystem::path path;   // canonical path of the module
  void* handle = nullptr;       // dlopen handle; modules are never unloaded
  bool newly_loaded = false;    // false: this path was already loaded in this process
  std::string content_digest;   // base64 sha256 of the module file
};

/// True when the process already has Python's C API (an embedding interpreter or libpython).
[[nodiscard]] bool process_has_python() noexcept;

/// Without Python: loads the embedded Python-symbol stub with RTLD_NOW | RTLD_GLOBAL (once).
/// With Python: does nothing. LoadFailed if the stub cannot be written or loaded.
[[nodiscard]] Status ensure_python_symbols();

/// The Python C-API symbols the stub defines.
[[nodiscard]] const std::vector<std::string>& stub_symbols();

/// `<variant_dir>/<id>.abi3.so` (the native module of torch arch and stable-ABI variants).
[[nodiscard]] std::filesystem::path module_path(const std::filesystem::path& variant_dir, std::string_view id);

/// Loads `<variant_dir>/<id>.abi3.so`. Checks before dlopen that the file exists (else LoadFailed
/// listing the modules found) and that no other module with this id is loaded; after dlopen that it
/// exports PyInit_<id> (its stem matches the id it was built with). Loading the same file again, or
/// a file with the same content (`content_digest`, e.g. the metadata digest entry, or a hash taken
/// here when empty), returns the first handle. A module needing a torch C-shim function the process
/// lacks fails saying the host torch is older than the variant needs (dlerror's text as a note).
[[nodiscard]] Expected<LoadedModule> load_module(const std::filesystem::path& variant_dir, std::string_view id,
                                                 std::string_view content_digest = {});

/// Whether a module with this id was loaded through load_module in this process.
[[nodiscard]] bool is_loaded(std::string_view id);

/// The torch C-shim function a failed dlopen could not resolve (`aoti_torch_*` / `torch_*` after
/// "undefined symbol: " in dlerror's text), or none. Such a module was built against a newer torch
/// than the one in the process (a stable-ABI variant whose target is newer than the host torch).
[[nodiscard]] std::optional<std::string> missing_torch_symbol(std::string_view dl_error);

}  // namespace khub::loader
