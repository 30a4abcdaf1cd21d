#pragma once
// ABI rules for native modules, as `kernel-builder check-abi` applies them:
// manylinux_2_28 symbol versions (set membership), Python abi3 (stable-ABI symbols added <= 3.9, no
// other Py* symbols), plus khub's own needed-library allow-list and op-namespace evidence.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"

namespace khub::publish {

struct ElfSymbol {
  std::string name;
  std::string version;  // e.g. "GLIBC_2.34" (from .gnu.version_r); empty when unversioned
  bool undefined = false;
};

/// What the checks need from one ELF shared object.
struct ElfInfo {
  std::string machine;                   // "x86_64", "aarch64" or "other"
  std::vector<std::string> needed;       // DT_NEEDED entries
  std::vector<ElfSymbol> dynamic;        // .dynsym
  std::vector<std::string> local_names;  // .symtab names (empty when stripped)
  std::vector<std::string> rodata_strings;  // NUL-terminated strings of .rodata that look like identifiers
};

/// Reads an ELF file with elfutils' libelf. Returns Unsupported (`Unsupported file format`) for
/// non-ELF input (PE, Mach-O, text), Io when unreadable.
[[nodiscard]] Expected<ElfInfo> read_elf(const std::filesystem::path& path);

struct ManylinuxViolation {
  std::string symbol;
  std::string dep;      // e.g. GLIBC
  std::string version;  // normalised as kernel-abi-check prints it (trailing .0 removed): "2.34"
  friend bool operator==(const ManylinuxViolation&, const ManylinuxViolation&) = default;
};

/// Undefined versioned symbols whose version is not in the policy's list for the dependency
/// (x86_64 / aarch64 lists of auditwheel's manylinux_2_28). Versions without `_` are skipped.
/// Returns Unsupported for a policy other than `manylinux_2_28`.
[[nodiscard]] Expected<std::vector<ManylinuxViolation>> check_manylinux(const ElfInfo& elf,
                                                                      std::string_view policy = "manylinux_2_28");

struct Abi3Violation {
  std::string symbol;
  std::optional<std::string> added;  // stable-ABI version it was added in; none = not in the stable ABI
  friend bool operator==(const Abi3Violation&, const Abi3Violation&) = default;
  /// `Non-ABI3 symbol: <name>` or `<name>: added in Python <v>`.
  [[nodiscard]] std::string describe() const;
};

/// Undefined `Py*` / `_Py*` symbols not usable with the limited API of Python major.minor.
[[nodiscard]] std::vector<Abi3Violation> check_abi3(const ElfInfo& elf, int major = 3, int minor = 9);

/// Added-in version of a stable-ABI symbol ("3.2"), or none. Source: publisher/src/stable_abi_symbols.inc.
[[nodiscard]] std::optional<std::string> stable_abi_added(std::string_view symbol);

/// Torch version ("2.12") that added a C-shim function (or shim type) to the stable ABI, or none for
/// a name that existed before 2.10 or is not torch's. Source: publisher/src/torch_shim_versions.inc.
[[nodiscard]] std::optional<std::string> torch_shim_added(std::string_view symbol);

struct TorchStableAbiViolation {
  std::string symbol;                // the C-shim function, or the demangled C++ name
  std::optional<std::string> added;  // shim function newer than the target: the torch version that added it
  std::string target;                // the variant's stable-ABI target ("2.10")
  friend bool operator==(const TorchStableAbiViolation&, const TorchStableAbiViolation&) = default;
  /// `uses <sym>, which is not part of the Torch stable ABI` or
  /// `uses <sym>, added to torch's C shim in <added>, after the stable-ABI target <target>`.
  [[nodiscard]] std::string describe() const;
};

/// The Torch stable-ABI rules of kernel-abi-check for a variant targeting torch major.minor, over the
/// undefined symbols: a C-shim function in the version table must not be newer than the target;
/// any other symbol that demangles into `c10::`, `at::` or `torch::` (but not `torch::stable::`) is
/// not part of the stable ABI.
[[nodiscard]] std::vector<TorchStableAbiViolation> check_torch_stable_abi(const ElfInfo& elf, int target_major,
                                                                          int target_minor);

/// DT_NEEDED entries that are neither on the manylinux_2_28 allow-list nor part of the Torch / CUDA
/// runtime a kernel loads into (libtorch*, libc10*, libcudart, libcuda, libcublas*, libnvrtc*, ...).
/// libpython is never allowed (abi3 modules must not link it).
[[nodiscard]] std::vector<std::string> disallowed_libraries(const ElfInfo& elf);

/// Op namespaces the module registers: the `<ns>` of `TORCH_LIBRARY_init_<ns>` /
/// `STABLE_TORCH_LIBRARY_init_<ns>` functions (static initialisers of TORCH_LIBRARY, in .symtab).
[[nodiscard]] std::vector<std::string> torch_library_namespaces(const ElfInfo& elf);

/// Module names of exported `PyInit_<name>` functions (REGISTER_EXTENSION).
[[nodiscard]] std::vector<std::string> python_module_names(const ElfInfo& elf);

}  // namespace khub::publish
