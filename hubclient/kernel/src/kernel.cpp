// The only torch translation unit of khub::kernel: host facts from LibTorch, loading through
// khub::loader, op lookup in the dispatcher. c10::Error never leaves this file except from
// Op::typed / Op::call_boxed, where callers expect torch semantics (stable-ABI kernels' own
// std::runtime_error is turned into c10::Error there).
#include "khub/kernel.h"

#include <algorithm>
#include <mutex>

#include "khub/hub/download.h"
#include "khub/loader/loader.h"
#include "khub/protocol/lock.h"
#include "khub/variants/torch_host.h"

namespace khub {
namespace fs = std::filesystem;

const variants::HostInfo& current_host() {
  static const variants::HostInfo host = variants::detect_host();
  return host;
}

void detail::throw_as_torch_error(const std::exception& e) { throw c10::Error(std::string(e.what())); }

std::vector<c10::IValue> Op::call_boxed(std::vector<c10::IValue> args) const {
  torch::jit::Stack stack(std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  try {
    handle_.callBoxed(&stack);
  } catch (const c10::Error&) {
    throw;
  } catch (const std::exception& e) {
    detail::throw_as_torch_error(e);
  }
  return std::vector<c10::IValue>(std::make_move_iterator(stack.begin()), std::make_move_iterator(stack.end()));
}

namespace {

std::vector<std::string> ops_in_namespace(const std::string& ns) {
  std::vector<std::string> out;
  const std::string prefix = ns + "::";
  for (const auto& name : c10::Dispatcher::singleton().getAllOpNames())
    if (name.name.rfind(prefix, 0) == 0) out.push_back(name.name.substr(prefix.size()));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Error registration_failed(const std::string& id, const std::string& what) {
  return Error(ErrorCode::LoadFailed, "loading " + id + " failed in its op registration",
               "the module may register a namespace that another kernel already uses")
      .note(what);
}

Expected<hub::ClientOptions> client_options(const GetKernelOptions& o) {
  KHUB_TRY(auto opts, hub::ClientOptions::from_environment());
  if (!o.endpoint.empty()) {
    opts.endpoint = o.endpoint;
    while (!opts.endpoint.empty() && opts.endpoint.back() == '/') opts.endpoint.pop_back();
  }
  if (!o.cache_dir.empty()) opts.cache_dir = o.cache_dir;
  opts.user_agent = o.user_agent;
  const auto& host = current_host();
  opts.ua_backend = host.backend.token();
  if (host.torch) opts.ua_torch = host.torch->str();
  return opts;
}

hub::KernelRequest request_for(std::string_view repo_id, const GetKernelOptions& o) {
  hub::KernelRequest r;
  r.repo_id = std::string(repo_id);
  r.options = o;
  r.reuse_hashes = HashReuse::Unchanged;  // a warm call re-checks file stamps, not every byte
  return r;
}

}  // namespace

std::vector<std::string> Kernel::ops() const { return ops_in_namespace(id()); }

Expected<Op> Kernel::op(std::string_view name) const {
  std::string full = id() + "::" + std::string(name);
  auto handle = c10::Dispatcher::singleton().findSchema(c10::OperatorName(full, ""));
  if (!handle) {
    std::string list;
    for (const auto& o : ops()) list += (list.empty() ? "" : ", ") + o;
    return Error(ErrorCode::EntryNotFound, "kernel " + id() + " has no op '" + std::string(name) + "'",
                 "available ops: " + (list.empty() ? std::string("none") : list));
  }
  return Op(*handle, full);
}

Expected<Kernel> Kernel::load(hub::FetchedKernel fetched) {
  const std::string id = fetched.metadata.id;
  if (!loader::is_loaded(id) && !ops_in_namespace(id).empty())
    return Error(ErrorCode::LoadFailed, "op namespace " + id + " is already registered by another library",
                 "two kernels can only load side by side when their ids differ");
  Expected<loader::LoadedModule> module = Error(ErrorCode::LoadFailed, "not loaded");
  try {
    std::string digest;
    if (fetched.metadata.digest && fetched.metadata.digest->algorithm == protocol::DigestAlgorithm::Sha256) {
      auto it = fetched.metadata.digest->files.find(id + ".abi3.so");
      if (it != fetched.metadata.digest->files.end()) digest = it->second;
    }
    module = loader::load_module(fetched.variant_dir, id, digest);
  } catch (const c10::Error& e) {  // a TORCH_LIBRARY static initialiser threw
    return registration_failed(id, e.what_without_backtrace());
  } catch (const std::exception& e) {  // a STABLE_TORCH_LIBRARY one (std::runtime_error)
    return registration_failed(id, e.what());
  }
  if (!module) {
    const auto& host = current_host();
    return std::move(module).error().note("host torch " + (host.torch ? host.torch->str() : std::string("none")) +
                                          "; variant " + fetched.variant);
  }
  if (module->newly_loaded && ops_in_namespace(id).empty())
    return Error(ErrorCode::LoadFailed,
                 module->path.filename().string() + " registered no ops in namespace " + id,
                 "metadata.id must equal the TORCH_LIBRARY namespace of the module");
  return Kernel(std::move(fetched));
}

Expected<Kernel> Kernel::load(hub::KernelTree tree) {
  for (const auto& dep : tree.dependencies) {
    if (!dep.kernel.loadable) {
      tree.kernel.warnings.push_back(hub::python_only_warning(dep));
      continue;
    }
    auto loaded = Kernel::load(dep.kernel);
    if (!loaded)
      return std::move(loaded).error().note("kernel dependency " + hub::describe(dep.dependency) + " of " +
                                            dep.dependent + ", loaded before it");
  }
  KHUB_TRY(auto kernel, Kernel::load(std::move(tree.kernel)));
  kernel.dependencies_ = std::move(tree.dependencies);
  return kernel;
}

Expected<Kernel> Kernel::dependency(std::string_view repo_id) const {
  for (const auto& dep : dependencies_) {
    if (dep.dependency.repo_id != repo_id) continue;
    if (!dep.kernel.loadable)
      return Error(ErrorCode::Unsupported,
                   "kernel dependency " + hub::describe(dep.dependency) + " has only a Python-only build here (" +
                       dep.kernel.variant + ")",
                   "the Python `kernels` package loads it; khub loads native builds only");
    return Kernel(dep.kernel);  // loaded before this kernel
  }
  return Error(ErrorCode::EntryNotFound,
               "Dependency '" + std::string(repo_id) + "' not found in kernel dependencies. Ensure the dependency is "
               "added to `kernel-deps` in build.toml.");
}

namespace {

// A kernel on disk and its kernel-depends tree, whose nodes come from LOCAL_KERNELS, then the Hub
// (the cache offline). `self` keys the top kernel for cycle checks: its repo id and version for a
// LOCAL_KERNELS override, else (as kernels keys get_local_kernel's kernel) its path at version 0.
Expected<Kernel> open_and_load(const fs::path& path, const GetKernelOptions& options, hub::KernelRequest self) {
  variants::HostInfo host = current_host();
  if (!options.backend.empty()) {
    KHUB_TRY(host, variants::with_backend(host, options.backend));
  }
  hub::KernelTree tree;
  KHUB_TRY(tree.kernel, hub::open_local_kernel(path, host, HashReuse::Unchanged));
  if (!tree.kernel.metadata.kernel_depends.empty()) {
    KHUB_TRY(auto opts, client_options(options));
    auto client = hub::shared_client(opts);
    KHUB_TRY(tree.dependencies, hub::locate_dependencies(*client, current_host(), self, tree.kernel));
    KHUB_CHECK(hub::install_dependencies(*client, tree.dependencies, self));
  }
  return Kernel::load(std::move(tree));
}

}  // namespace

Expected<Kernel> get_local_kernel(const fs::path& path, std::string_view backend) {
  GetKernelOptions options;
  options.backend = std::string(backend);
  hub::KernelRequest self = request_for(path.string(), options);
  self.options.version = 0;
  return open_and_load(path, options, std::move(self));
}

Expected<Kernel> get_kernel(std::string_view repo_id, const GetKernelOptions& options) {
  KHUB_TRY(auto opts, client_options(options));
  for (const auto& [id, path] : opts.local_kernels)
    if (id == repo_id) return open_and_load(path, options, request_for(repo_id, options));
  auto client = hub::shared_client(opts);
  KHUB_TRY(auto tree, hub::fetch_kernel_tree(*client, current_host(), request_for(repo_id, options)));
  return Kernel::load(std::move(tree));
}

Expected<bool> has_kernel(std::string_view repo_id, const GetKernelOptions& options) {
  KHUB_TRY(auto opts, client_options(options));
  auto client = hub::shared_client(opts);
  hub::KernelRequest request = request_for(repo_id, options);
  KHUB_TRY(bool found, hub::has_variant(*client, current_host(), request));
  if (!found) return false;
  // As kernels' has_kernel: every kernel of its kernel-depends tree must have a build here too
  // (metadata.json files only; no trust check, no arch check). A missing build is false, as there.
  request.options.trust_remote_code = true;
  request.check_arch = false;
  KHUB_TRY(auto top, hub::locate_kernel(*client, current_host(), request));
  auto tree = hub::locate_dependencies(*client, current_host(), request, top);
  if (!tree && (tree.error().code == ErrorCode::NoVariant || tree.error().code == ErrorCode::OfflineMiss))
    return false;
  if (!tree) return std::move(tree).error();
  return true;
}

Expected<Kernel> load_kernel(const fs::path& lockfile, std::string_view repo_id, const GetKernelOptions& options) {
  KHUB_TRY(auto lock, protocol::read_lock_file(lockfile));
  auto commit = lock.commit_for(repo_id);
  if (!commit)
    return Error(ErrorCode::InvalidArgument,
                 "Kernel `" + std::string(repo_id) +
                     "` is not locked. Please lock it with `kernels lock <project>` and then reinstall the project.",
                 "run `khub lock` in the project");
  GetKernelOptions pinned = options;
  pinned.version.reset();
  pinned.revision = *commit;
  pinned.trust_remote_code = true;  // locked loads skip the publisher check, as in kernels
  KHUB_TRY(auto opts, client_options(pinned));
  auto client = hub::shared_client(opts);
  hub::KernelRequest request = request_for(repo_id, pinned);
  request.follow_redirect = false;  // the locked commit of this repo, not where it points now
  KHUB_TRY(auto tree, hub::fetch_kernel_tree(*client, current_host(), request, &lock));
  const hub::FetchedKernel& fetched = tree.kernel;
  if (lock.format == protocol::LockFormat::Legacy) {
    for (const auto& entry : lock.legacy) {
      if (entry.repo_id != repo_id) continue;
      auto it = std::find_if(entry.variants.begin(), entry.variants.end(),
                             [&](const auto& v) { return v.first == fetched.variant; });
      if (it == entry.variants.end())
        return Error(ErrorCode::Integrity, "No lock found for build variant: " + fetched.variant,
                     "re-run `khub lock` so the lock covers this host's variant");
      KHUB_TRY(auto hash, hub::variant_lock_hash(fetched.variant_dir));
      if (hash != it->second.hash)
        return Error(ErrorCode::Integrity, "Lock file specifies kernel with hash " + it->second.hash +
                                               ", but downloaded kernel has hash: " + hash,
                     "the repo changed since it was locked, or the cache is damaged; re-run `khub lock`");
      break;
    }
  }
  return Kernel::load(std::move(tree));
}

}  // namespace khub
