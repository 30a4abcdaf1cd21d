#pragma once
// khub's application API: get a kernel from the Hub (or a local build), verified and loaded without
// Python, and call its ops through the torch dispatcher.
//
//   auto kernel = khub::get_kernel("kernels-community/relu", {.version = 1});
//   if (!kernel) { std::cerr << kernel.error().describe() << "\n"; return 1; }
//   auto op = kernel->op("rms_norm");
//   at::Tensor y = op->typed<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double)>()
//                      .call(x, w, 1e-6);
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/hub/kernel_fetch.h"
#include "khub/hub/kernel_tree.h"
#include "khub/protocol/metadata.h"

namespace khub {

/// version / revision, backend, trust, client overrides and the signature policy (hub::KernelOptions).
using GetKernelOptions = hub::KernelOptions;

namespace detail {
/// Throws c10::Error with e's message. Kernels of stable-ABI variants fail with std::runtime_error
/// (STD_TORCH_CHECK), torch-arch kernels with c10::Error: callers see c10::Error from both.
[[noreturn]] void throw_as_torch_error(const std::exception& e);
}  // namespace detail

template <class Sig>
class TypedOp;

/// The statically typed handle of an op: `.call(args…)` runs it through the dispatcher, and a
/// failure inside the op is a c10::Error whichever ABI the kernel was built for.
template <class Return, class... Args>
class TypedOp<Return(Args...)> {
 public:
  explicit TypedOp(c10::TypedOperatorHandle<Return(Args...)> handle) : handle_(std::move(handle)) {}
  Return call(Args... args) const {
    try {
      return handle_.call(std::forward<Args>(args)...);
    } catch (const c10::Error&) {
      throw;
    } catch (const std::exception& e) {
      detail::throw_as_torch_error(e);
    }
  }
  [[nodiscard]] const c10::FunctionSchema& schema() const { return handle_.schema(); }
  /// The dispatcher's own handle (its calls pass a stable kernel's std::runtime_error through as is).
  [[nodiscard]] const c10::TypedOperatorHandle<Return(Args...)>& handle() const noexcept { return handle_; }
  operator const c10::TypedOperatorHandle<Return(Args...)>&() const noexcept { return handle_; }

 private:
  c10::TypedOperatorHandle<Return(Args...)> handle_;
};

/// One op of a loaded kernel: `<metadata.id>::<name>` in the torch dispatcher.
class Op {
 public:
  /// The statically typed handle; `.call(args…)` runs the op. Throws c10::Error when `Sig` does not
  /// match the schema (as torch does).
  template <class Sig>
  [[nodiscard]] TypedOp<Sig> typed() const {
    return TypedOp<Sig>(handle_.typed<Sig>());
  }
  /// Calls the op with boxed arguments and returns its outputs. Errors inside the op surface as
  /// c10::Error, exactly as when calling torch ops directly (for stable-ABI kernels too).
  [[nodiscard]] std::vector<c10::IValue> call_boxed(std::vector<c10::IValue> args) const;
  [[nodiscard]] const std::string& name() const noexcept { return name_; }  // "<id>::<op>"
  [[nodiscard]] const c10::FunctionSchema& schema() const { return handle_.schema(); }
  [[nodiscard]] const c10::OperatorHandle& handle() const noexcept { return handle_; }

 private:
  friend class Kernel;
  Op(c10::OperatorHandle handle, std::string name) : handle_(std::move(handle)), name_(std::move(name)) {}
  c10::OperatorHandle handle_;
  std::string name_;
};

/// A loaded kernel: where it came from, how it was checked, and its ops.
class Kernel {
 public:
  [[nodiscard]] const std::string& id() const noexcept { return fetched_.metadata.id; }
  [[nodiscard]] const std::string& repo_id() const noexcept { return fetched_.repo.id; }
  [[nodiscard]] const std::string& variant() const noexcept { return fetched_.variant; }
  [[nodiscard]] const std::string& commit() const noexcept { return fetched_.commit; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return fetched_.variant_dir; }
  [[nodiscard]] const protocol::KernelMetadata& metadata() const noexcept { return fetched_.metadata; }
  /// True when the digest in metadata.json (or, without one, every blob's etag) was checked.
  [[nodiscard]] bool verified() const noexcept { return fetched_.verified; }
  [[nodiscard]] hub::SignatureStatus signature() const noexcept { return fetched_.signature; }
  [[nodiscard]] const std::vector<std::string>& warnings() const noexcept { return fetched_.warnings; }
  [[nodiscard]] const variants::Resolution& resolution() const noexcept { return fetched_.resolution; }
  /// Op names registered in namespace id(), sorted ("rms_norm", …).
  [[nodiscard]] std::vector<std::string> ops() const;
  /// The op `<id>::<name>`; EntryNotFound listing the available ops when absent.
  [[nodiscard]] Expected<Op> op(std::string_view name) const;

  /// Its kernel-depends tree, in load order (each after its own dependencies), each downloaded and
  /// verified. The natively loadable ones were loaded before this kernel; a Python-only one
  /// (`kernel.loadable` false) was not, and a warning names it.
  [[nodiscard]] const std::vector<hub::ResolvedDependency>& dependencies() const noexcept { return dependencies_; }
  /// The loaded dependency `repo_id` (as kernels' get_kernel_dep names it). EntryNotFound when this
  /// kernel does not depend on it; Unsupported when it only has a Python-only build here.
  [[nodiscard]] Expected<Kernel> dependency(std::string_view repo_id) const;

  /// Loads an already fetched variant (fetch_kernel / open_local_kernel result), without dependencies.
  [[nodiscard]] static Expected<Kernel> load(hub::FetchedKernel fetched);
  /// Loads a fetched tree: the natively loadable dependencies first, in load order, then the kernel.
  [[nodiscard]] static Expected<Kernel> load(hub::KernelTree tree);

 private:
  explicit Kernel(hub::FetchedKernel fetched) : fetched_(std::move(fetched)) {}
  hub::FetchedKernel fetched_;
  std::vector<hub::ResolvedDependency> dependencies_;
};

/// LOCAL_KERNELS override → trusted-publisher check → version/revision → commit → redirect →
/// variant → metadata and arch checks → the same for every kernel of its kernel-depends tree →
/// download of each chosen variant → verification → dlopen, dependencies first → ops.
[[nodiscard]] Expected<Kernel> get_kernel(std::string_view repo_id, const GetKernelOptions& options = {});

/// A kernel from disk: repo root, its build/, or a variant directory. Its kernel-depends come from
/// LOCAL_KERNELS or the Hub (the cache when offline), as kernels' get_local_kernel fetches them.
[[nodiscard]] Expected<Kernel> get_local_kernel(const std::filesystem::path& path, std::string_view backend = {});

/// Whether the repo has a variant this host can load at that version/revision, and each kernel of
/// its kernel-depends tree a build that fits (metadata.json files only; no trust check).
[[nodiscard]] Expected<bool> has_kernel(std::string_view repo_id, const GetKernelOptions& options = {});

/// Loads `repo_id` at the commit `lockfile` (kernels.lock, either format) pins, checking the
/// variant's git_lfs_concat hash when the lock records one; each kernel of its kernel-depends tree
/// at the commit the lock pins for it (`khub lock` locks them all).
[[nodiscard]] Expected<Kernel> load_kernel(const std::filesystem::path& lockfile, std::string_view repo_id,
                                           const GetKernelOptions& options = {});

/// The host facts used for variant choice in this process (LibTorch's version, ABI, CUDA; GPU).
[[nodiscard]] const variants::HostInfo& current_host();

}  // namespace khub
