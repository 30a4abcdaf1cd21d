// ELF reading for the ABI checks, with elfutils' libelf: DT_NEEDED, .dynsym with GNU symbol versions
// (.gnu.version + .gnu.version_r), .symtab names and identifier-like .rodata strings.
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>
#include <map>

#include "khub/publish/abi_check.h"

namespace khub::publish {
namespace {

class ElfHandle {
 public:
  explicit ElfHandle(const std::filesystem::path& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ >= 0) elf_ = elf_begin(fd_, ELF_C_READ, nullptr);
  }
  ~ElfHandle() {
    if (elf_) elf_end(elf_);
    if (fd_ >= 0) ::close(fd_);
  }
  ElfHandle(const ElfHandle&) = delete;
  ElfHandle& operator=(const ElfHandle&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] Elf* get() const { return elf_; }

 private:
  int fd_ = -1;
  Elf* elf_ = nullptr;
};

bool is_identifier(std::string_view s) {
  if (s.size() < 2 || s.size() > 200) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// Version index -> name, from .gnu.version_r (needed versions; the ones undefined symbols carry).
std::map<unsigned, std::string> needed_versions(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr) {
  std::map<unsigned, std::string> out;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!data) return out;
  std::size_t offset = 0;
  for (unsigned i = 0; i < shdr.sh_info; ++i) {
    GElf_Verneed need;
    if (!gelf_getverneed(data, static_cast<int>(offset), &need)) break;
    std::size_t aux_offset = offset + need.vn_aux;
    for (unsigned j = 0; j < need.vn_cnt; ++j) {
      GElf_Vernaux aux;
      if (!gelf_getvernaux(data, static_cast<int>(aux_offset), &aux)) break;
      const char* name = elf_strptr(elf, shdr.sh_link, aux.vna_name);
      if (name) out[aux.vna_other & 0x7fff] = name;
      aux_offset += aux.vna_next;
    }
    offset += need.vn_next;
    if (need.vn_next == 0) break;
  }
  return out;
}

}  // namespace

Expected<ElfInfo> read_elf(const std::filesystem::path& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error(ErrorCode::Unsupported, "libelf is too old");
  ElfHandle handle(path);
  if (handle.fd() < 0) {
    return Error(ErrorCode::Io, path.string() + ": cannot open: " + std::strerror(errno));
  }
  if (!handle.get() || elf_kind(handle.get()) != ELF_K_ELF) {
    return Error(ErrorCode::Unsupported, "Unsupported file format");
  }
  Elf* elf = handle.get();
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(elf, &ehdr)) return Error(ErrorCode::Unsupported, "Unsupported file format");
  ElfInfo info;
  info.machine = ehdr.e_machine == EM_X86_64 ? "x86_64" : ehdr.e_machine == EM_AARCH64 ? "aarch64" : "other";
  std::size_t shstrndx = 0;
  elf_getshdrstrndx(elf, &shstrndx);

  Elf_Scn* dynsym = nullptr;
  Elf_Scn* versym = nullptr;
  GElf_Shdr dynsym_hdr{};
  std::map<unsigned, std::string> versions;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) continue;
    const char* sec_name = elf_strptr(elf, shstrndx, shdr.sh_name);
    switch (shdr.sh_type) {
      case SHT_DYNSYM:
        dynsym = scn;
        dynsym_hdr = shdr;
        break;
      case SHT_GNU_versym: versym = scn; break;
      case SHT_GNU_verneed: versions = needed_versions(elf, scn, shdr); break;
      case SHT_DYNAMIC: {
        Elf_Data* data = elf_getdata(scn, nullptr);
        std::size_t n = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
        for (std::size_t i = 0; data && i < n; ++i) {
          GElf_Dyn dyn;
          if (gelf_getdyn(data, static_cast<int>(i), &dyn) && dyn.d_tag == DT_NEEDED) {
            if (const char* lib = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val)) info.needed.emplace_back(lib);
          }
        }
        break;
      }
      case SHT_SYMTAB: {
        Elf_Data* data = elf_getdata(scn, nullptr);
        std::size_t n = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
        for (std::size_t i = 0; data && i < n; ++i) {
          GElf_Sym sym;
          if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
          const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
          if (name && *name) info.local_names.emplace_back(name);
        }
        break;
      }
      case SHT_PROGBITS:
        if (sec_name && std::strncmp(sec_name, ".rodata", 7) == 0) {
          Elf_Data* data = elf_getdata(scn, nullptr);
          if (!data || !data->d_buf) break;
          const char* p = static_cast<const char*>(data->d_buf);
          std::size_t size = data->d_size, start = 0;
          for (std::size_t i = 0; i < size; ++i) {
            if (p[i] != '\0') continue;
            std::string_view s(p + start, i - start);
            if (is_identifier(s)) info.rodata_strings.emplace_back(s);
            start = i + 1;
          }
        }
        break;
      default: break;
    }
  }
  if (dynsym) {
    Elf_Data* data = elf_getdata(dynsym, nullptr);
    Elf_Data* vdata = versym ? elf_getdata(versym, nullptr) : nullptr;
    std::size_t n = dynsym_hdr.sh_entsize ? dynsym_hdr.sh_size / dynsym_hdr.sh_entsize : 0;
    for (std::size_t i = 1; data && i < n; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      const char* name = elf_strptr(elf, dynsym_hdr.sh_link, sym.st_name);
      if (!name || !*name) continue;
      ElfSymbol s{name, "", sym.st_shndx == SHN_UNDEF};
      GElf_Versym v;
      if (vdata && gelf_getversym(vdata, static_cast<int>(i), &v)) {
        auto it = versions.find(v & 0x7fff);
        if (it != versions.end()) s.version = it->second;
      }
      info.dynamic.push_back(std::move(s));
    }
  }
  return info;
}

}  // namespace khub::publish
