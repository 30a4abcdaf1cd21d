// read_elf for builds without elfutils' libelf (KHUB_HAVE_ELF off): every module is reported as
// uncheckable, so `khub check` fails and `khub push` needs `--abi-check off` — never a silent pass.
#include "khub/publish/abi_check.h"

namespace khub::publish {

Expected<ElfInfo> read_elf(const std::filesystem::path& path) {
  return Error(ErrorCode::Unsupported, path.filename().string() + ": khub was built without libelf; ELF checks unavailable",
               "install libelf-dev and rebuild, or pass --abi-check off / --no-abi");
}

}  // namespace khub::publish
