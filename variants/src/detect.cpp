// Host facts without torch: uname mapped like Python's platform module,
// the CUDA runtime version from libcudart and the device capability from libcuda, both via dlopen;
// a ROCm device's arch from the amdgpu driver's topology in sysfs.
#include "khub/variants/host.h"

#include <dlfcn.h>
#include <sys/utsname.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif

namespace khub::variants {
namespace {

// Handles stay open on purpose: unloading the CUDA libraries while the process runs is unsafe once
// they are initialised, and the process may use them later.
void* open_first(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  return nullptr;
}

template <typename Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

std::string map_os(std::string_view sysname) {
  if (sysname == "Linux") return "linux";
  if (sysname == "Darwin") return "darwin";
  std::string lower(sysname);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return lower;
}

std::string map_cpu(std::string_view os, std::string_view machine) {
  if (os == "darwin" && machine == "arm64") return "aarch64";
  if (os == "windows" && machine == "AMD64") return "x86_64";
  if (os == "windows" && machine == "ARM64") return "aarch64";  // khub choice; Python leaves it
  return std::string(machine);
}

std::optional<Version> macos_version() {
#if defined(__APPLE__)
  char buf[64] = {};
  size_t size = sizeof buf;
  if (sysctlbyname("kern.osproductversion", buf, &size, nullptr, 0) == 0) return parse_dotted_version(buf);
#endif
  return std::nullopt;
}

}  // namespace

std::optional<Version> cuda_runtime_version(std::vector<std::string>* warnings) {
  void* cudart = open_first({"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"});
  if (!cudart) return std::nullopt;
  using GetVersion = int (*)(int*);
  auto get_version = symbol<GetVersion>(cudart, "cudaRuntimeGetVersion");
  int v = 0;
  if (!get_version || get_version(&v) != 0) {
    if (warnings) warnings->push_back("System has CUDA runtime library, but cannot get runtime version.");
    return std::nullopt;
  }
  return Version{v / 1000, (v % 1000) / 10};
}

std::optional<Version> cuda_device_capability() {
  void* cuda = open_first({"libcuda.so.1", "libcuda.so"});
  if (!cuda) return std::nullopt;
  using Init = int (*)(unsigned);
  using DeviceGet = int (*)(int*, int);
  using GetAttribute = int (*)(int*, int, int);
  auto init = symbol<Init>(cuda, "cuInit");
  auto device_get = symbol<DeviceGet>(cuda, "cuDeviceGet");
  auto get_attribute = symbol<GetAttribute>(cuda, "cuDeviceGetAttribute");
  if (!init || !device_get || !get_attribute || init(0) != 0) return std::nullopt;
  constexpr int kMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  constexpr int kMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
  int device = 0, major = 0, minor = 0;
  if (device_get(&device, 0) != 0 || get_attribute(&major, kMajor, device) != 0 ||
      get_attribute(&minor, kMinor, device) != 0) {
    return std::nullopt;
  }
  return Version{major, minor};
}

std::optional<std::string> rocm_device_arch(const std::filesystem::path& kfd_nodes) {
  std::error_code ec;
  std::vector<std::pair<long, std::filesystem::path>> nodes;  // numeric order: node 10 after node 9
  for (const auto& e : std::filesystem::directory_iterator(kfd_nodes, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos || name.size() > 9) continue;
    nodes.emplace_back(std::stol(name), e.path());
  }
  std::sort(nodes.begin(), nodes.end());
  for (const auto& [index, dir] : nodes) {
    std::ifstream in(dir / "properties");
    std::string key;
    long long value = 0;
    while (in >> key >> value) {
      if (key != "gfx_target_version") continue;
      if (value <= 0) break;  // a CPU node
      const long long major = value / 10000, minor = value / 100 % 100, stepping = value % 100;
      if (minor > 15 || stepping > 15) break;  // not a gfx name rocminfo could print
      std::ostringstream out;
      out << "gfx" << major << std::hex << minor << stepping;
      return out.str();
    }
  }
  return std::nullopt;
}

HostInfo detect_platform() {
  HostInfo host;
  struct utsname u {};
  if (uname(&u) == 0) {
    host.os = map_os(u.sysname);
    host.cpu = map_cpu(host.os, u.machine);
  }
  if (host.os == "darwin") host.macos = macos_version();
  return host;
}

HostInfo detect_host_without_torch(std::vector<std::string>* warnings) {
  HostInfo host = detect_platform();
  if (auto cuda = cuda_runtime_version(warnings)) host.backend = Backend{BackendKind::Cuda, cuda};
  host.cuda_capability = cuda_device_capability();
  return host;
}

HostInfo detect_host_without_torch() { return detect_host_without_torch(nullptr); }

}  // namespace khub::variants
