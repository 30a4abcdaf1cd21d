#pragma once
// khub's torch-free API (khub::ffi): get a kernel's tvm-ffi build (`tvm-ffi<MM>-…` variants) from a Kernel
// Hub or from disk, verified as khub::get_kernel verifies, loaded through libtvm_ffi.so, and call its
// exported functions with DLPack tensors over your own buffers (host or device) and scalars. No LibTorch,
// no Python: neither is in this header, in khub::ffi's build or in its link.
//
//   auto kernel = khub::ffi::get_kernel("user/rmsnorm", {.version = 1});
//   if (!kernel) { std::cerr << kernel.error().describe() << '\n'; return 1; }
//   auto rms_norm = kernel->function("rms_norm_cpu");          // or function_for("rms_norm", x.device)
//   DLTensor x = …, out = …;                                   // views of your buffers
//   auto r = rms_norm->call({&out, &x, nullptr, 1e-6});        // nullptr: an absent optional tensor
//   if (!r) std::cerr << r.error().describe() << '\n';         // "ValueError: rms_norm: …"
//
// Function names are the module's exports; kernel-builder's convention is `<op>_<backend>` (rms_norm_cpu,
// rms_norm_cuda), outputs first. Kernel::functions() lists them.
#include <dlpack/dlpack.h>

#include <concepts>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/hub/kernel_fetch.h"
#include "khub/protocol/metadata.h"
#include "khub/variants/host.h"

namespace khub::ffi {

/// version / revision, backend, trust, client overrides and the signature policy: the same struct as
/// khub::GetKernelOptions (hub::KernelOptions).
using GetKernelOptions = hub::KernelOptions;

/// The tvm-ffi runtime (libtvm_ffi.so) in this process.
struct Runtime {
  std::filesystem::path library;  // the file loaded (or found already loaded)
  variants::Version version;      // major.minor from TVMFFIGetVersion: what tvm-ffi<MM> variants must match
  int patch = 0;
};

/// Loads libtvm_ffi.so once per process with RTLD_NOW | RTLD_GLOBAL, so kernel modules (whose NEEDED entry is
/// the bare `libtvm_ffi.so`, no rpath) bind to it: one already in the process; else the file named by
/// $KHUB_TVM_FFI_LIB (or kernels-rs's $TVM_FFI_LIB); else the one khub was built against (the apache-tvm-ffi
/// wheel, or KHUB_TVM_FFI_ROOT); else `libtvm_ffi.so` on the loader's search path. LoadFailed naming every
/// place tried when none loads. Thread-safe; later calls return the first outcome.
[[nodiscard]] Expected<Runtime> runtime();

/// Like runtime(), but tries `library` first (an application that ships its own copy). Only the first
/// loaded runtime counts: once one is loaded, this returns it (or InvalidArgument when it is another file).
[[nodiscard]] Expected<Runtime> load_runtime(const std::filesystem::path& library);

/// The host facts khub::ffi chooses variants with: OS, CPU, the CUDA runtime version from libcudart (dlopen;
/// none → cpu), the GPU's capability from libcuda, the tvm-ffi version of runtime() (none when it failed),
/// and no torch — Python's `kernels` facts on a host without torch but with apache-tvm-ffi, so both clients
/// choose the same variant.
[[nodiscard]] const variants::HostInfo& current_host();

/// One argument of a call. Tensors are passed as DLTensor* (kTVMFFIDLTensorPtr): views of the caller's
/// memory, never copied or owned, which must stay valid during the call. Strings must stay valid too.
class Arg {
 public:
  Arg(std::nullptr_t) noexcept : type_(kNone) {}  // None: an absent optional argument
  Arg(DLTensor* t) noexcept : type_(t ? kTensor : kNone) { v_.p = t; }
  Arg(const DLTensor* t) noexcept : type_(t ? kTensor : kNone) { v_.p = t; }
  Arg(bool b) noexcept : type_(kBool) { v_.i = b; }
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Arg(T i) noexcept : type_(kInt) {
    v_.i = static_cast<int64_t>(i);
  }
  template <std::floating_point T>
  Arg(T f) noexcept : type_(kFloat) {
    v_.f = static_cast<double>(f);
  }
  Arg(const char* s) noexcept : type_(s ? kString : kNone) { v_.p = s; }
  Arg(const std::string& s) noexcept : type_(kString) { v_.p = s.c_str(); }
  Arg(DLDevice d) noexcept : type_(kDevice) { v_.device = d; }
  Arg(DLDataType t) noexcept : type_(kDataType) { v_.dtype = t; }

  enum Type : int { kNone, kTensor, kBool, kInt, kFloat, kString, kDevice, kDataType };
  [[nodiscard]] Type type() const noexcept { return type_; }
  [[nodiscard]] const DLTensor* tensor() const noexcept { return type_ == kTensor ? static_cast<const DLTensor*>(v_.p) : nullptr; }
  [[nodiscard]] int64_t as_int() const noexcept { return v_.i; }
  [[nodiscard]] double as_float() const noexcept { return v_.f; }
  [[nodiscard]] const char* as_string() const noexcept { return static_cast<const char*>(v_.p); }
  [[nodiscard]] DLDevice as_device() const noexcept { return v_.device; }
  [[nodiscard]] DLDataType as_dtype() const noexcept { return v_.dtype; }

 private:
  Type type_;
  union {
    int64_t i;
    double f;
    const void* p;
    DLDevice device;
    DLDataType dtype;
  } v_{};
};

/// What a function returned. Kernels with caller-allocated outputs return None; scalars and strings are
/// kept, other objects (tensors, arrays) are released and only their type index is reported.
struct Value {
  enum Type : int { kNone, kBool, kInt, kFloat, kString, kObject };
  Type type = kNone;
  int64_t i = 0;
  double f = 0;
  std::string s;
  int32_t type_index = 0;  // tvm-ffi's type index (TVMFFITypeIndex) of what came back
};

/// An error a function raised (tvm::ffi::Error: TVM_FFI_THROW / TVM_FFI_CHECK in the kernel), fetched with
/// TVMFFIErrorMoveFromRaised, or one khub found before calling (kind "khub": an argument it cannot pass).
struct CallError {
  std::string kind;       // ValueError, TypeError, RuntimeError, IndexError, … (tvm-ffi's error kinds)
  std::string message;    // the kernel's message, verbatim
  std::string backtrace;  // tvm-ffi's backtrace (most recent call first); may be empty
  std::string function;   // the function called
  /// "<kind>: <message>" and the function, one line.
  [[nodiscard]] std::string describe() const;
  /// As a khub::Error (InvalidArgument for ValueError / TypeError / IndexError / khub's own, Unsupported
  /// for others), message "<function>: <kind>: <message>", the backtrace as notes.
  [[nodiscard]] Error to_error() const;
};

/// The outcome of a call: the value, or the error the function raised.
class [[nodiscard]] CallResult {
 public:
  CallResult(Value v) : value_(std::move(v)) {}          // NOLINT: implicit by design
  CallResult(CallError e) : error_(std::move(e)) {}      // NOLINT
  explicit operator bool() const noexcept { return !error_; }
  [[nodiscard]] bool has_value() const noexcept { return !error_; }
  [[nodiscard]] const Value& value() const { return value_; }
  [[nodiscard]] const CallError& error() const { return *error_; }

 private:
  Value value_;
  std::optional<CallError> error_;
};

/// Per-call settings.
struct CallOptions {
  /// The CUDA stream (cudaStream_t) the kernel runs on. Before the call khub sets it with TVMFFIEnvSetStream
  /// for every CUDA device among the tensor arguments, and restores the previous stream after, as tvm-ffi's
  /// Python layer does with torch's current stream. nullptr: the legacy default stream.
  void* stream = nullptr;
};

namespace detail {
struct ModuleState;
struct FunctionState;
}  // namespace detail

/// One exported function of a loaded kernel module (a tvm-ffi Function object; keeps its module alive).
/// Calls may come from any thread.
class Function {
 public:
  /// Calls the function: 0 on success, else the error it raised (kind, message, backtrace).
  CallResult call(std::span<const Arg> args, const CallOptions& options = {}) const;
  CallResult call(std::initializer_list<Arg> args, const CallOptions& options = {}) const {
    return call(std::span<const Arg>(args.begin(), args.size()), options);
  }
  [[nodiscard]] const std::string& name() const noexcept;

 private:
  friend class Kernel;
  explicit Function(std::shared_ptr<const detail::FunctionState> state) : state_(std::move(state)) {}
  std::shared_ptr<const detail::FunctionState> state_;
};

/// A loaded tvm-ffi kernel: where it came from, how it was checked, its module and functions.
class Kernel {
 public:
  [[nodiscard]] const std::string& id() const noexcept { return fetched_.metadata.id; }
  [[nodiscard]] const std::string& repo_id() const noexcept { return fetched_.repo.id; }
  [[nodiscard]] const std::string& variant() const noexcept { return fetched_.variant; }
  [[nodiscard]] const std::string& commit() const noexcept { return fetched_.commit; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return fetched_.variant_dir; }
  /// `<variant dir>/<id>.so` (.dylib on macOS).
  [[nodiscard]] const std::filesystem::path& module_path() const noexcept;
  [[nodiscard]] const protocol::KernelMetadata& metadata() const noexcept { return fetched_.metadata; }
  [[nodiscard]] bool verified() const noexcept { return fetched_.verified; }
  [[nodiscard]] hub::SignatureStatus signature() const noexcept { return fetched_.signature; }
  [[nodiscard]] const std::vector<std::string>& warnings() const noexcept { return fetched_.warnings; }
  [[nodiscard]] const variants::Resolution& resolution() const noexcept { return fetched_.resolution; }

  /// The functions the module exports (its `__tvm_ffi_<name>` dynamic symbols), sorted.
  [[nodiscard]] const std::vector<std::string>& functions() const noexcept;
  /// The function `name`; EntryNotFound listing the exported ones when absent.
  [[nodiscard]] Expected<Function> function(std::string_view name) const;
  /// kernel-builder's naming for a device: `<op>_cpu` for kDLCPU, `<op>_cuda` for kDLCUDA (`<op>_rocm`,
  /// `<op>_xpu`, `<op>_metal`), then plain `<op>`.
  [[nodiscard]] Expected<Function> function_for(std::string_view op, DLDeviceType device) const;

  /// Loads an already fetched tvm-ffi variant (fetch_kernel / open_local_kernel with the TvmFfi runtime).
  [[nodiscard]] static Expected<Kernel> load(hub::FetchedKernel fetched);

 private:
  Kernel(hub::FetchedKernel fetched, std::shared_ptr<const detail::ModuleState> module)
      : fetched_(std::move(fetched)), module_(std::move(module)) {}
  hub::FetchedKernel fetched_;
  std::shared_ptr<const detail::ModuleState> module_;
};

/// LOCAL_KERNELS override → trusted-publisher check → version/revision → commit → redirect → variant (the
/// tvm-ffi build Python would pick on a torch-less host) → metadata and arch checks → download of that
/// variant → verification → load through libtvm_ffi.so. Same options and errors as khub::get_kernel.
[[nodiscard]] Expected<Kernel> get_kernel(std::string_view repo_id, const GetKernelOptions& options = {});

/// A kernel from disk: repo root, its build/, or a variant directory.
[[nodiscard]] Expected<Kernel> get_local_kernel(const std::filesystem::path& path, std::string_view backend = {});

/// Whether the repo has a tvm-ffi variant this host loads at that version/revision (no download, no trust
/// check).
[[nodiscard]] Expected<bool> has_kernel(std::string_view repo_id, const GetKernelOptions& options = {});

}  // namespace khub::ffi
