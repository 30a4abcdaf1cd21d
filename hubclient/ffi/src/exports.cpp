// Lists `__tvm_ffi_*` functions from .dynsym: the section headers name the dynamic symbol table and its
// string table; every read is bounds-checked against the file (a module is data here, not trusted code).
#include "exports.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

namespace khub::ffi {

std::vector<std::string> exported_functions(const std::filesystem::path& module) {
  std::vector<std::string> out;
  std::ifstream in(module, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto fits = [&](uint64_t off, uint64_t len) { return off <= file.size() && len <= file.size() - off; };
  Elf64_Ehdr eh;
  if (!fits(0, sizeof eh)) return out;
  std::memcpy(&eh, file.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || !fits(eh.e_shoff, uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr)))
    return out;
  const auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, file.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  constexpr std::string_view kPrefix = "__tvm_ffi_";
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sym = section(i);
    if (sym.sh_type != SHT_DYNSYM || sym.sh_link >= eh.e_shnum || !fits(sym.sh_offset, sym.sh_size)) continue;
    const Elf64_Shdr str = section(sym.sh_link);
    if (!fits(str.sh_offset, str.sh_size)) continue;
    const std::string_view strtab(file.data() + str.sh_offset, str.sh_size);
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sym.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym s;
      std::memcpy(&s, file.data() + sym.sh_offset + off, sizeof s);
      const int bind = ELF64_ST_BIND(s.st_info);
      if (s.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) || s.st_name >= strtab.size()) continue;
      const std::string_view tail = strtab.substr(s.st_name);
      const std::string_view name = tail.substr(0, tail.find('\0'));
      if (name.substr(0, kPrefix.size()) != kPrefix || name.substr(kPrefix.size(), 1) == "_" ||
          name.size() == kPrefix.size())
        continue;
      out.emplace_back(name.substr(kPrefix.size()));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace khub::ffi
