// khub::ffi: the torch-free API. libtvm_ffi.so is loaded with dlopen and used through its C ABI only
// (c_api.h: TVMFFIFunctionGetGlobal, TVMFFIFunctionCall, TVMFFIErrorMoveFromRaised, TVMFFIObjectDecRef,
// TVMFFIEnvSetStream), which tvm-ffi keeps stable across 0.X releases; its C++ classes are not (the
// ModuleObj::GetFunction return type changed within 0.1.13), so khub compiles against no C++ tvm-ffi API
// and works with any libtvm_ffi.so of the same major.minor. Modules load as Python's tvm_ffi.load_module
// loads them (the global `ffi.ModuleLoadFromFile`) and stay loaded for the process.
#include "khub/ffi.h"

#include <dlfcn.h>
#include <link.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

#include "exports.h"
#include "khub/hub/hub_client.h"
#include "khub/hub/options.h"
#include "khub/variants/variant.h"

namespace khub::ffi {
namespace fs = std::filesystem;

namespace {

// The C functions of libtvm_ffi.so khub calls, resolved once.
struct Api {
  void* handle = nullptr;
  Runtime runtime;
  void (*get_version)(TVMFFIVersion*) = nullptr;
  int (*function_get_global)(const TVMFFIByteArray*, TVMFFIObjectHandle*) = nullptr;
  int (*function_call)(TVMFFIObjectHandle, TVMFFIAny*, int32_t, TVMFFIAny*) = nullptr;
  int (*object_dec_ref)(TVMFFIObjectHandle) = nullptr;
  void (*error_move_from_raised)(TVMFFIObjectHandle*) = nullptr;
  int (*env_set_stream)(int32_t, int32_t, TVMFFIStreamHandle, TVMFFIStreamHandle*) = nullptr;
};

template <typename Fn>
bool resolve(void* handle, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, name));
  return out != nullptr;
}

fs::path loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) return map->l_name;
  return fallback;
}

Expected<Api> open_runtime(const std::vector<std::pair<std::string, std::string>>& candidates) {
  std::vector<std::string> tried;
  for (const auto& [where, file] : candidates) {
    if (file.empty()) continue;
    const int flags = where == "already loaded" ? RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD : RTLD_NOW | RTLD_GLOBAL;
    void* h = dlopen(file.c_str(), flags);
    if (!h) {
      if (where != "already loaded") {
        const char* e = dlerror();
        tried.push_back(where + ": " + (e ? e : file));
      }
      continue;
    }
    Api api;
    api.handle = h;
    const bool ok = resolve(h, "TVMFFIGetVersion", api.get_version) &&
                    resolve(h, "TVMFFIFunctionGetGlobal", api.function_get_global) &&
                    resolve(h, "TVMFFIFunctionCall", api.function_call) &&
                    resolve(h, "TVMFFIObjectDecRef", api.object_dec_ref) &&
                    resolve(h, "TVMFFIErrorMoveFromRaised", api.error_move_from_raised) &&
                    resolve(h, "TVMFFIEnvSetStream", api.env_set_stream);
    if (!ok) {
      tried.push_back(where + ": " + file + " lacks tvm-ffi's C API (TVMFFIGetVersion, TVMFFIFunctionCall, …)");
      continue;  // left loaded: unloading a library that may have run initialisers is not safe
    }
    TVMFFIVersion v{};
    api.get_version(&v);
    api.runtime.library = loaded_path(h, file);
    api.runtime.version = variants::Version{static_cast<int>(v.major), static_cast<int>(v.minor)};
    api.runtime.patch = static_cast<int>(v.patch);
    return api;
  }
  Error e(ErrorCode::LoadFailed, "no tvm-ffi runtime (libtvm_ffi.so) could be loaded",
          "install the apache-tvm-ffi wheel and point $KHUB_TVM_FFI_LIB at its tvm_ffi/lib/libtvm_ffi.so, or add "
          "that folder to LD_LIBRARY_PATH");
  for (const auto& t : tried) e.note(t);
  return e;
}

std::mutex& runtime_mutex() {
  static std::mutex m;
  return m;
}

std::optional<Expected<Api>>& runtime_slot() {
  static std::optional<Expected<Api>> slot;
  return slot;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

Expected<const Api*> api(const fs::path* preferred = nullptr) {
  std::lock_guard<std::mutex> g(runtime_mutex());
  auto& slot = runtime_slot();
  if (!slot || (preferred && !*slot)) {
    std::vector<std::pair<std::string, std::string>> c;
    if (preferred) c.emplace_back("the given library", preferred->string());
    c.emplace_back("already loaded", "libtvm_ffi.so");
    if (const char* v = env("KHUB_TVM_FFI_LIB")) c.emplace_back("$KHUB_TVM_FFI_LIB", v);
    if (const char* v = env("TVM_FFI_LIB")) c.emplace_back("$TVM_FFI_LIB", v);
#ifdef KHUB_TVM_FFI_DEFAULT_LIBRARY
    c.emplace_back("khub's build default", KHUB_TVM_FFI_DEFAULT_LIBRARY);
#endif
    c.emplace_back("the loader's search path", "libtvm_ffi.so");
    slot = open_runtime(c);
  }
  if (!*slot) return slot->error();
  return &slot->value();
}

// --- calls through the C ABI ---------------------------------------------------------------------

TVMFFIAny none_any() {
  TVMFFIAny a{};
  a.type_index = kTVMFFINone;
  a.v_int64 = 0;
  return a;
}

TVMFFIAny raw_str(const char* s) {
  TVMFFIAny a = none_any();
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

TVMFFIAny object_view(TVMFFIObjectHandle obj) {
  TVMFFIAny a = none_any();
  a.type_index = TVMFFIObjectGetTypeIndex(obj);
  a.v_obj = static_cast<TVMFFIObject*>(obj);
  return a;
}

std::string bytes(const TVMFFIByteArray& b) { return b.data ? std::string(b.data, b.size) : std::string(); }

// The error raised by the last failed call on this thread (moved out of tvm-ffi's slot).
CallError take_error(const Api& api, std::string function) {
  CallError e;
  e.function = std::move(function);
  TVMFFIObjectHandle err = nullptr;
  api.error_move_from_raised(&err);
  if (!err) {
    e.kind = "RuntimeError";
    e.message = "the call failed without raising an error";
    return e;
  }
  const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  e.kind = bytes(cell->kind);
  e.message = bytes(cell->message);
  e.backtrace = bytes(cell->backtrace);
  api.object_dec_ref(err);
  return e;
}

// Converts (and releases) a returned value.
Value take_value(const Api& api, TVMFFIAny& ret) {
  Value v;
  v.type_index = ret.type_index;
  switch (ret.type_index) {
    case kTVMFFINone: v.type = Value::kNone; break;
    case kTVMFFIBool: v.type = Value::kBool; v.i = ret.v_int64; break;
    case kTVMFFIInt: v.type = Value::kInt; v.i = ret.v_int64; break;
    case kTVMFFIFloat: v.type = Value::kFloat; v.f = ret.v_float64; break;
    case kTVMFFISmallStr: v.type = Value::kString; v.s = bytes(TVMFFISmallBytesGetContentByteArray(&ret)); break;
    default:
      if (ret.type_index >= kTVMFFIStaticObjectBegin) {
        if (ret.type_index == kTVMFFIStr) {
          v.type = Value::kString;
          v.s = bytes(*TVMFFIBytesGetByteArrayPtr(ret.v_obj));
        } else {
          v.type = Value::kObject;
        }
        api.object_dec_ref(ret.v_obj);
      } else {
        v.type = Value::kObject;  // a POD kind khub does not map (device, dtype, pointer)
      }
  }
  return v;
}

// Calls a function object with already converted arguments.
CallResult call_object(const Api& api, TVMFFIObjectHandle fn, std::vector<TVMFFIAny>& args, const std::string& name) {
  TVMFFIAny ret = none_any();
  if (api.function_call(fn, args.data(), static_cast<int32_t>(args.size()), &ret) != 0) return take_error(api, name);
  return take_value(api, ret);
}

// A global function of the runtime (`ffi.ModuleLoadFromFile`, …), looked up once.
Expected<TVMFFIObjectHandle> global_function(const Api& api, const std::string& name) {
  static std::mutex m;
  static std::map<std::string, TVMFFIObjectHandle> cache;
  std::lock_guard<std::mutex> g(m);
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  TVMFFIByteArray key{name.data(), name.size()};
  TVMFFIObjectHandle fn = nullptr;
  if (api.function_get_global(&key, &fn) != 0) return take_error(api, name).to_error();
  if (!fn)
    return Error(ErrorCode::LoadFailed, "the tvm-ffi runtime " + api.runtime.library.string() + " has no global '" +
                                            name + "'");
  cache[name] = fn;  // kept for the process
  return fn;
}

std::string module_suffix() {
#if defined(__APPLE__)
  return ".dylib";
#else
  return ".so";
#endif
}

}  // namespace

// --- module and function state ----------------------------------------------------------------

namespace detail {

struct FunctionState {
  const Api* api = nullptr;
  TVMFFIObjectHandle function = nullptr;  // owned for the process, as the module
  std::string name;
};

struct ModuleState {
  const Api* api = nullptr;
  fs::path path;
  TVMFFIObjectHandle module = nullptr;  // never released: modules stay loaded, as tvm_ffi.load_module keeps them
  std::vector<std::string> functions;
  mutable std::mutex mutex;
  mutable std::map<std::string, std::shared_ptr<const FunctionState>, std::less<>> cache;
};

}  // namespace detail

namespace {

std::mutex& modules_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::shared_ptr<const detail::ModuleState>>& modules() {
  static std::map<std::string, std::shared_ptr<const detail::ModuleState>> m;
  return m;
}

Error load_error(const fs::path& path, std::string what) {
  Error e(ErrorCode::LoadFailed, "cannot load " + path.string());
  if (what.find("libcudart") != std::string::npos)
    e.hint = "this CUDA variant links the CUDA runtime (libcudart.so.<major>), which the loader cannot find: add "
             "its folder to LD_LIBRARY_PATH, or load the cpu variant (backend = \"cpu\")";
  else if (what.find("undefined symbol: TVMFFI") != std::string::npos)
    e.hint = "the module needs a newer libtvm_ffi.so than the one loaded";
  return e.note(std::move(what));
}

Expected<std::shared_ptr<const detail::ModuleState>> load_module(const Api& api, const fs::path& file) {
  // The key is the file itself (a cached snapshot entry links to its blob); tvm-ffi gets the path as named,
  // since it picks its loader by the extension, which blobs do not have.
  std::error_code ec;
  const fs::path canonical = fs::canonical(file, ec);
  const std::string key = ec ? file.string() : canonical.string();
  const std::string path = fs::absolute(file, ec).string();
  std::lock_guard<std::mutex> g(modules_mutex());
  if (auto it = modules().find(key); it != modules().end()) return it->second;
  // dlopen first, RTLD_NOW: a missing library (libcudart) or symbol shows here with dlerror's words; tvm-ffi's
  // own dlopen (RTLD_LAZY | RTLD_LOCAL) then finds this handle.
  if (!dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    const char* e = dlerror();
    return load_error(file, e ? e : "dlopen failed");
  }
  KHUB_TRY(TVMFFIObjectHandle loader, global_function(api, "ffi.ModuleLoadFromFile"));
  std::vector<TVMFFIAny> args{raw_str(path.c_str())};
  TVMFFIAny ret = none_any();
  if (api.function_call(loader, args.data(), 1, &ret) != 0) {
    CallError err = take_error(api, "ffi.ModuleLoadFromFile");
    return load_error(file, err.kind + ": " + err.message);
  }
  if (ret.type_index < kTVMFFIStaticObjectBegin)
    return Error(ErrorCode::LoadFailed, "ffi.ModuleLoadFromFile returned no module for " + file.string());
  auto state = std::make_shared<detail::ModuleState>();
  state->api = &api;
  state->path = path;
  state->module = ret.v_obj;
  state->functions = exported_functions(path);
  modules()[key] = state;
  return std::shared_ptr<const detail::ModuleState>(std::move(state));
}

}  // namespace

// --- public API --------------------------------------------------------------------------------

Expected<Runtime> runtime() {
  KHUB_TRY(const Api* a, api());
  return a->runtime;
}

Expected<Runtime> load_runtime(const fs::path& library) {
  KHUB_TRY(const Api* a, api(&library));
  std::error_code ec;
  if (fs::equivalent(a->runtime.library, library, ec)) return a->runtime;
  return Error(ErrorCode::InvalidArgument,
               "a tvm-ffi runtime is already loaded from " + a->runtime.library.string() + ", not " + library.string(),
               "call load_runtime before anything else loads libtvm_ffi.so");
}

const variants::HostInfo& current_host() {
  static const variants::HostInfo host = [] {
    variants::HostInfo h = variants::detect_host_without_torch();
    if (auto rt = runtime()) h.tvm_ffi = rt->version;
    return h;
  }();
  return host;
}

std::string CallError::describe() const {
  return (function.empty() ? std::string() : function + ": ") + kind + ": " + message;
}

Error CallError::to_error() const {
  const bool caller = kind == "ValueError" || kind == "TypeError" || kind == "IndexError" || kind == "khub";
  Error e(caller ? ErrorCode::InvalidArgument : ErrorCode::Unsupported, describe());
  for (size_t start = 0; start < backtrace.size();) {
    size_t end = backtrace.find('\n', start);
    if (end == std::string::npos) end = backtrace.size();
    if (end > start) e.note(backtrace.substr(start, end - start));
    start = end + 1;
  }
  return e;
}

const std::string& Function::name() const noexcept { return state_->name; }

CallResult Function::call(std::span<const Arg> args, const CallOptions& options) const {
  const Api& a = *state_->api;
  std::vector<TVMFFIAny> packed;
  packed.reserve(args.size());
  std::vector<std::pair<int32_t, int32_t>> cuda_devices;  // (type, id) of the tensors on a GPU
  for (const Arg& arg : args) {
    TVMFFIAny v = none_any();
    switch (arg.type()) {
      case Arg::kNone: break;
      case Arg::kTensor: {
        v.type_index = kTVMFFIDLTensorPtr;
        v.v_ptr = const_cast<DLTensor*>(arg.tensor());
        const DLDevice d = arg.tensor()->device;
        if (d.device_type == kDLCUDA || d.device_type == kDLROCM) {
          const std::pair<int32_t, int32_t> key{d.device_type, d.device_id};
          if (std::find(cuda_devices.begin(), cuda_devices.end(), key) == cuda_devices.end())
            cuda_devices.push_back(key);
        }
        break;
      }
      case Arg::kBool: v.type_index = kTVMFFIBool; v.v_int64 = arg.as_int(); break;
      case Arg::kInt: v.type_index = kTVMFFIInt; v.v_int64 = arg.as_int(); break;
      case Arg::kFloat: v.type_index = kTVMFFIFloat; v.v_float64 = arg.as_float(); break;
      case Arg::kString: v = raw_str(arg.as_string()); break;
      case Arg::kDevice: v.type_index = kTVMFFIDevice; v.v_device = arg.as_device(); break;
      case Arg::kDataType: v.type_index = kTVMFFIDataType; v.v_dtype = arg.as_dtype(); break;
    }
    packed.push_back(v);
  }
  // The stream is thread-local state of the runtime: set it for this call, put the previous one back after.
  std::vector<TVMFFIStreamHandle> previous(cuda_devices.size(), nullptr);
  for (size_t i = 0; i < cuda_devices.size(); ++i)
    if (a.env_set_stream(cuda_devices[i].first, cuda_devices[i].second, options.stream, &previous[i]) != 0)
      return take_error(a, state_->name);
  CallResult result = call_object(a, state_->function, packed, state_->name);
  for (size_t i = 0; i < cuda_devices.size(); ++i)
    a.env_set_stream(cuda_devices[i].first, cuda_devices[i].second, previous[i], nullptr);
  return result;
}

const fs::path& Kernel::module_path() const noexcept { return module_->path; }

const std::vector<std::string>& Kernel::functions() const noexcept { return module_->functions; }

Expected<Function> Kernel::function(std::string_view name) const {
  const detail::ModuleState& m = *module_;
  std::lock_guard<std::mutex> g(m.mutex);
  if (auto it = m.cache.find(name); it != m.cache.end()) return Function(it->second);
  const Api& a = *m.api;
  KHUB_TRY(TVMFFIObjectHandle get, global_function(a, "ffi.ModuleGetFunction"));
  const std::string n(name);
  TVMFFIAny query = none_any();
  query.type_index = kTVMFFIBool;
  std::vector<TVMFFIAny> args{object_view(m.module), raw_str(n.c_str()), query};
  TVMFFIAny ret = none_any();
  if (a.function_call(get, args.data(), 3, &ret) != 0) return take_error(a, "ffi.ModuleGetFunction").to_error();
  if (ret.type_index != kTVMFFIFunction) {
    if (ret.type_index >= kTVMFFIStaticObjectBegin) a.object_dec_ref(ret.v_obj);
    std::string list;
    for (const auto& f : m.functions) list += (list.empty() ? "" : ", ") + f;
    return Error(ErrorCode::EntryNotFound, "kernel " + id() + " has no function '" + n + "'",
                 "exported functions: " + (list.empty() ? std::string("none") : list));
  }
  auto state = std::make_shared<detail::FunctionState>();
  state->api = &a;
  state->function = ret.v_obj;
  state->name = n;
  std::shared_ptr<const detail::FunctionState> shared = std::move(state);
  m.cache.emplace(n, shared);
  return Function(std::move(shared));
}

Expected<Function> Kernel::function_for(std::string_view op, DLDeviceType device) const {
  const char* suffix = device == kDLCPU ? "_cpu" : device == kDLCUDA ? "_cuda" : device == kDLROCM ? "_rocm"
                       : device == kDLOneAPI ? "_xpu" : device == kDLMetal ? "_metal" : nullptr;
  const auto exported = [&](const std::string& n) {
    return functions().empty() || std::find(functions().begin(), functions().end(), n) != functions().end();
  };
  const std::string with_backend = suffix ? std::string(op) + suffix : std::string();
  if (suffix && exported(with_backend)) {
    if (auto f = function(with_backend)) return f;
  }
  if (exported(std::string(op))) {
    if (auto f = function(op)) return f;
  }
  std::string list;
  for (const auto& f : functions()) list += (list.empty() ? "" : ", ") + f;
  return Error(ErrorCode::EntryNotFound,
               "kernel " + id() + " has no function " + (suffix ? "'" + with_backend + "' or " : std::string()) + "'" +
                   std::string(op) + "'",
               "exported functions: " + (list.empty() ? std::string("none") : list));
}

Expected<Kernel> Kernel::load(hub::FetchedKernel fetched) {
  auto parsed = variants::parse_variant(fetched.variant);
  if (!parsed || !parsed->is_arch() || parsed->arch->framework.kind != variants::FrameworkKind::TvmFfi)
    return Error(ErrorCode::InvalidArgument,
                 "variant " + fetched.variant + " is not a tvm-ffi build; khub::ffi loads tvm-ffi<MM> variants only",
                 "load torch and stable-ABI builds with khub::get_kernel (LibTorch)");
  KHUB_TRY(const Api* a, api());
  if (parsed->arch->framework.version != a->runtime.version)
    return Error(ErrorCode::LoadFailed,
                 "variant " + fetched.variant + " needs tvm-ffi " + parsed->arch->framework.version.str() +
                     ", the loaded runtime is " + a->runtime.version.str() + " (" + a->runtime.library.string() + ")",
                 "use a libtvm_ffi.so of the same major.minor ($KHUB_TVM_FFI_LIB)");
  const fs::path file = fetched.variant_dir / (fetched.metadata.id + module_suffix());
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    Error e(ErrorCode::LoadFailed, "variant " + fetched.variant + " has no module " + file.filename().string(),
            "metadata.id must equal the module's file stem");
    for (const auto& entry : fs::directory_iterator(fetched.variant_dir, ec))
      if (entry.path().extension() == module_suffix()) e.note("found " + entry.path().filename().string());
    return e;
  }
  KHUB_TRY(auto module, load_module(*a, file));
  return Kernel(std::move(fetched), std::move(module));
}

namespace {

Expected<hub::ClientOptions> client_options(const GetKernelOptions& o) {
  KHUB_TRY(auto opts, hub::ClientOptions::from_environment());
  if (!o.endpoint.empty()) {
    opts.endpoint = o.endpoint;
    while (!opts.endpoint.empty() && opts.endpoint.back() == '/') opts.endpoint.pop_back();
  }
  if (!o.cache_dir.empty()) opts.cache_dir = o.cache_dir;
  opts.user_agent = o.user_agent;
  opts.ua_backend = current_host().backend.token();
  return opts;
}

hub::KernelRequest request_for(std::string_view repo_id, const GetKernelOptions& o) {
  hub::KernelRequest r;
  r.repo_id = std::string(repo_id);
  r.options = o;
  r.reuse_hashes = HashReuse::Unchanged;  // a warm call re-checks file stamps, not every byte
  r.runtime = variants::NativeRuntime::TvmFfi;
  return r;
}

}  // namespace

Expected<Kernel> get_local_kernel(const fs::path& path, std::string_view backend) {
  KHUB_CHECK(runtime());  // its version decides which tvm-ffi variants fit
  variants::HostInfo host = current_host();
  if (!backend.empty()) {
    KHUB_TRY(host, variants::with_backend(host, backend));
  }
  KHUB_TRY(auto fetched, hub::open_local_kernel(path, host, HashReuse::Unchanged, /*python_only_ok=*/false,
                                                variants::NativeRuntime::TvmFfi));
  return Kernel::load(std::move(fetched));
}

Expected<Kernel> get_kernel(std::string_view repo_id, const GetKernelOptions& options) {
  KHUB_CHECK(runtime());
  KHUB_TRY(auto opts, client_options(options));
  for (const auto& [id, path] : opts.local_kernels)
    if (id == repo_id) return get_local_kernel(path, options.backend);
  auto client = hub::shared_client(opts);
  KHUB_TRY(auto fetched, hub::fetch_kernel(*client, current_host(), request_for(repo_id, options)));
  return Kernel::load(std::move(fetched));
}

Expected<bool> has_kernel(std::string_view repo_id, const GetKernelOptions& options) {
  KHUB_CHECK(runtime());
  KHUB_TRY(auto opts, client_options(options));
  auto client = hub::shared_client(opts);
  return hub::has_variant(*client, current_host(), request_for(repo_id, options));
}

}  // namespace khub::ffi
