// ELF files (the native modules of a build, checked by `khub check` before a push): read_elf through
// the public abi_check API on a temp file, then every check that reads its result.
#include "fuzz_util.h"
#include "khub/publish/abi_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace khub::publish;
  static const auto path = khub_fuzz::scratch() / "module.so";
  khub_fuzz::write_file(path, khub_fuzz::text(data, size));
  auto elf = read_elf(path);
  if (!elf) return 0;
  (void)check_manylinux(*elf);
  for (const auto& v : check_abi3(*elf)) (void)v.describe();
  for (const auto& v : check_torch_stable_abi(*elf, 2, 10)) (void)v.describe();
  (void)disallowed_libraries(*elf);
  (void)torch_library_namespaces(*elf);
  (void)python_module_names(*elf);
  return 0;
}
