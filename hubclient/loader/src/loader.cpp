#include "khub/loader/loader.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "khub/base/hash.h"

extern "C" {
extern const unsigned char khub_pystub_data[];
extern const std::size_t khub_pystub_size;
}

namespace khub::loader {
namespace fs = std::filesystem;
namespace {

std::mutex& load_mutex() {
  static std::mutex m;
  return m;
}

struct Registry {
  std::map<std::string, LoadedModule> by_id;  // id → module
  bool stub_loaded = false;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

// Writes the embedded stub into an anonymous memory file and loads it from /proc/self/fd; falls
// back to a file in the temp folder where memfd is unavailable.
Status load_stub_locked() {
  int fd = ::memfd_create("libkhub_pystub.so", MFD_CLOEXEC);
  fs::path file;
  if (fd < 0) {
    file = fs::temp_directory_path() / ("libkhub_pystub." + std::to_string(::getpid()) + ".so");
    fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
      return Error(ErrorCode::LoadFailed, std::string("cannot write the Python symbol stub: ") + std::strerror(errno));
  }
  std::size_t off = 0;
  while (off < khub_pystub_size) {
    ssize_t n = ::write(fd, khub_pystub_data + off, khub_pystub_size - off);
    if (n <= 0) {
      ::close(fd);
      return Error(ErrorCode::LoadFailed, std::string("cannot write the Python symbol stub: ") + std::strerror(errno));
    }
    off += static_cast<std::size_t>(n);
  }
  std::string path = file.empty() ? "/proc/self/fd/" + std::to_string(fd) : file.string();
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  ::close(fd);
  if (!file.empty()) {
    std::error_code ec;
    fs::remove(file, ec);
  }
  if (!h) return Error(ErrorCode::LoadFailed, "cannot load the Python symbol stub: " + dl_error());
  return {};
}

}  // namespace

bool process_has_python() noexcept {
  void* sym = ::dlsym(RTLD_DEFAULT, "PyModule_Create2");
  return sym != nullptr && ::dlsym(RTLD_DEFAULT, "khub_python_stub_marker") == nullptr;
}

const std::vector<std::string>& stub_symbols() {
  static const std::vector<std::string> symbols = {
      "PyModule_Create2", "PyModuleDef_Init", "PyModule_FromDefAndSpec2", "PyModule_ExecDef",
      "PyModule_AddObject", "PyModule_AddObjectRef", "PyModule_AddIntConstant", "PyModule_AddStringConstant",
      "PyErr_SetString", "PyErr_Occurred", "PyErr_Clear", "Py_IncRef", "Py_DecRef", "_Py_Dealloc",
      "PyLong_FromLong", "PyUnicode_FromString", "Py_BuildValue", "PyArg_ParseTuple", "PyExc_RuntimeError",
      "PyExc_ImportError", "PyExc_TypeError", "PyExc_ValueError", "_Py_NoneStruct", "_Py_TrueStruct",
      "_Py_FalseStruct"};
  return symbols;
}

Status ensure_python_symbols() {
  std::lock_guard<std::mutex> g(load_mutex());
  auto& reg = registry();
  if (reg.stub_loaded || ::dlsym(RTLD_DEFAULT, "PyModule_Create2") != nullptr) return {};
  KHUB_CHECK(load_stub_locked());
  reg.stub_loaded = true;
  return {};
}

fs::path module_path(const fs::path& variant_dir, std::string_view id) {
  return variant_dir / (std::string(id) + ".abi3.so");
}

std::optional<std::string> missing_torch_symbol(std::string_view dl_error) {
  constexpr std::string_view kUndefined = "undefined symbol: ";
  const auto at = dl_error.find(kUndefined);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view symbol = dl_error.substr(at + kUndefined.size());
  symbol = symbol.substr(0, symbol.find_first_of(" \t\n,("));  // glibc may append " (file)" or ", version X"
  if (!symbol.starts_with("aoti_torch_") && !symbol.starts_with("torch_")) return std::nullopt;
  return std::string(symbol);
}

bool is_loaded(std::string_view id) {
  std::lock_guard<std::mutex> g(load_mutex());
  return registry().by_id.count(std::string(id)) != 0;
}

namespace {
std::string content_key(const fs::path& file, std::string_view given) {
  if (!given.empty()) return std::string(given);
  auto raw = hash_file(file, HashAlgorithm::Sha256);
  return raw ? base64_encode(*raw) : std::string();
}
}  // namespace

Expected<LoadedModule> load_module(const fs::path& variant_dir, std::string_view id, std::string_view content_digest) {
  if (id.empty() || id.find('/') != std::string_view::npos)
    return Error(ErrorCode::InvalidMetadata, "invalid kernel id '" + std::string(id) + "'");
  fs::path file = module_path(variant_dir, id);
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    std::string found;
    for (const auto& e : fs::directory_iterator(variant_dir, ec)) {
      std::string name = e.path().filename().string();
      if (name.ends_with(".so")) found += (found.empty() ? "" : ", ") + name;
    }
    return Error(ErrorCode::LoadFailed,
                 "no native module " + file.filename().string() + " in " + variant_dir.string(),
                 "metadata.id must equal the .so stem; the build may be broken")
        .note("modules found: " + (found.empty() ? std::string("none") : found));
  }
  fs::path canonical = fs::canonical(file, ec);
  if (ec) canonical = file;
  KHUB_CHECK(ensure_python_symbols());

  std::lock_guard<std::mutex> g(load_mutex());
  auto& reg = registry();
  if (auto it = reg.by_id.find(std::string(id)); it != reg.by_id.end()) {
    if (it->second.path == canonical) {
      LoadedModule again = it->second;
      again.newly_loaded = false;
      return again;
    }
    // Same bytes under another path (another cache, another snapshot) are the same kernel.
    std::string digest = content_key(canonical, content_digest);
    if (!digest.empty() && digest == it->second.content_digest) {
      LoadedModule again = it->second;
      again.newly_loaded = false;
      return again;
    }
    return Error(ErrorCode::LoadFailed,
                 "a kernel with id " + std::string(id) + " is already loaded from " + it->second.path.string(),
                 "two builds can only load side by side when their ids differ");
  }
  ::dlerror();
  void* handle = ::dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const std::string why = dl_error();
    if (auto symbol = missing_torch_symbol(why))
      return Error(ErrorCode::LoadFailed,
                   "cannot load " + canonical.string() + ": the host torch is older than the variant needs (it lacks " +
                       *symbol + ", a function of torch's C shim)",
                   "upgrade torch, or publish a variant whose stable-ABI target (torch-stable-abi<MM>) is not newer "
                   "than this torch")
          .note("dlerror: " + why);
    return Error(ErrorCode::LoadFailed, "cannot load " + canonical.string() + ": " + why,
                 "the module needs libtorch (and the CUDA runtime) of a matching version in the process");
  }
  std::string init = "PyInit_" + std::string(id);
  if (::dlsym(handle, init.c_str()) == nullptr)
    return Error(ErrorCode::LoadFailed,
                 canonical.filename().string() + " does not export " + init + ": its stem does not match the id it was built with");
  LoadedModule m{std::string(id), canonical, handle, true, content_key(canonical, content_digest)};
  reg.by_id[m.id] = m;
  return m;
}

}  // namespace khub::loader
