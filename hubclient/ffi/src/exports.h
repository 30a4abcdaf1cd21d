#pragma once
// The functions a tvm-ffi module exports, read from its ELF dynamic symbol table.
#include <filesystem>
#include <string>
#include <vector>

namespace khub::ffi {

/// Names of the defined `__tvm_ffi_<name>` dynamic symbols of an ELF64 shared library (TVM_FFI_DLL_EXPORT_
/// TYPED_FUNC's entry points; `__tvm_ffi__*` ones are tvm-ffi's metadata and context symbols, left out),
/// without the prefix, sorted. Empty when the file is not a readable ELF64 object.
[[nodiscard]] std::vector<std::string> exported_functions(const std::filesystem::path& module);

}  // namespace khub::ffi
