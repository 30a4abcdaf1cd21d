// The kernel-depends tree (kernels' resolve_kernel_tree): located whole, then installed.
#include "khub/hub/kernel_tree.h"

#include <algorithm>
#include <climits>

namespace khub::hub {
namespace {

// Bounds on what a Hub's metadata can make khub walk (kernels has none; Python's recursion limit
// stops it near 1000 levels): a chain deeper than this, or a tree with more kernels, is refused.
constexpr std::size_t kMaxDepth = 32;
constexpr std::size_t kMaxKernels = 256;

bool same_key(const protocol::KernelDependency& a, const protocol::KernelDependency& b) {
  return a.repo_id == b.repo_id && a.version == b.version && a.revision == b.revision;
}

// The commit a lock pins for exactly this dependency (kernels keys its locks by repo and version or
// revision); a legacy lock knows repos only.
Expected<std::string> locked_commit(const protocol::LockFile& lock, const protocol::KernelDependency& dep) {
  std::optional<std::string> commit;
  if (lock.format == protocol::LockFormat::Legacy) {
    commit = lock.commit_for(dep.repo_id);
  } else {
    for (const auto& l : lock.current)
      if (l.repo_id == dep.repo_id && l.version == dep.version && l.revision == dep.revision) commit = l.commit;
  }
  if (!commit)
    return Error(ErrorCode::InvalidArgument,
                 "Kernel `" + dep.repo_id +
                     "` is not locked. Please lock it with `kernels lock <project>` and then reinstall the project.",
                 "run `khub lock` in the project again: it locks every kernel of the dependency tree");
  return *commit;
}

class TreeWalk {
 public:
  TreeWalk(HubClient& client, const variants::HostInfo& host, const KernelRequest& top,
           const protocol::LockFile* lock)
      : client_(client), host_(host), top_(top), lock_(lock) {}

  // The kernel-depends of `kernel` (named `name` in messages), each resolved depth first.
  Status visit_children(const FetchedKernel& kernel, const std::string& name) {
    for (const auto& dep : kernel.metadata.kernel_depends) {
      if (auto visited = visit(dep, name); !visited)
        return std::move(visited).error().note("kernel dependency " + describe(dep) + " of " + name);
    }
    return {};
  }

  void enter(protocol::KernelDependency top) { path_.push_back(std::move(top)); }
  std::vector<ResolvedDependency> take() { return std::move(done_); }

 private:
  Status visit(const protocol::KernelDependency& dep, const std::string& dependent) {
    auto equal = [&](const protocol::KernelDependency& d) { return same_key(d, dep); };
    if (std::any_of(path_.begin(), path_.end(), equal))
      return Error(ErrorCode::InvalidMetadata, "Cyclic kernel dependency detected: " + dep.repo_id,
                   "the kernel-depends of these kernels name each other; ask their publishers to break the cycle");
    // Resolved already through another dependent (a diamond): the same node, once.
    if (std::any_of(done_.begin(), done_.end(), [&](const auto& r) { return equal(r.dependency); })) return {};
    if (path_.size() > kMaxDepth || done_.size() >= kMaxKernels)
      return Error(ErrorCode::InvalidMetadata,
                   "kernel-depends tree too large: more than " +
                       (path_.size() > kMaxDepth ? std::to_string(kMaxDepth) + " levels" : std::to_string(kMaxKernels) + " kernels"),
                   "khub refuses trees beyond these bounds; ask the publishers to flatten their dependencies");
    KHUB_TRY(auto node, locate(dep, dependent));
    path_.push_back(dep);
    KHUB_CHECK(visit_children(node.kernel, dep.repo_id));
    path_.pop_back();
    done_.push_back(std::move(node));
    return {};
  }

  Expected<ResolvedDependency> locate(const protocol::KernelDependency& dep, const std::string& dependent) {
    ResolvedDependency node;
    node.dependency = dep;
    node.dependent = dependent;
    for (const auto& [id, path] : client_.options().local_kernels) {
      if (id != dep.repo_id) continue;  // LOCAL_KERNELS overrides, as for the top kernel
      variants::HostInfo host = host_;
      if (!top_.options.backend.empty()) {
        KHUB_TRY(host, variants::with_backend(host_, top_.options.backend));
      }
      KHUB_TRY(node.kernel, open_local_kernel(path, host, top_.reuse_hashes, /*python_only_ok=*/true));
      node.local = true;
      return node;
    }
    KernelRequest request = top_;
    request.repo_id = dep.repo_id;
    request.repo_type.reset();
    request.python_only_ok = true;
    request.options.version.reset();
    request.options.revision.clear();
    if (lock_) {
      KHUB_TRY(request.options.revision, locked_commit(*lock_, dep));
      request.follow_redirect = false;
    } else if (dep.version) {
      if (*dep.version > static_cast<std::uint64_t>(INT_MAX))
        return Error(ErrorCode::RevisionNotFound, "Version " + std::to_string(*dep.version) + " not found");
      request.options.version = static_cast<int>(*dep.version);
    } else {
      request.options.revision = dep.revision.value_or("");
    }
    KHUB_TRY(node.kernel, locate_kernel(client_, host_, request));
    return node;
  }

  HubClient& client_;
  const variants::HostInfo& host_;
  const KernelRequest& top_;
  const protocol::LockFile* lock_;
  std::vector<protocol::KernelDependency> path_;  // the kernels being resolved, top first
  std::vector<ResolvedDependency> done_;          // load order
};

}  // namespace

std::string describe(const protocol::KernelDependency& dependency) {
  return dependency.repo_id + " (" +
         (dependency.version ? "version: " + std::to_string(*dependency.version)
                             : "revision: " + dependency.revision.value_or("")) +
         ")";
}

Expected<std::vector<ResolvedDependency>> locate_dependencies(HubClient& client, const variants::HostInfo& host,
                                                              const KernelRequest& top_request,
                                                              const FetchedKernel& top,
                                                              const protocol::LockFile* lock) {
  if (top.metadata.kernel_depends.empty()) return std::vector<ResolvedDependency>{};
  TreeWalk walk(client, host, top_request, lock);
  // The top kernel as kernels keys it: a kernel naming it again at the same version is a cycle.
  protocol::KernelDependency self{top_request.repo_id, std::nullopt, std::nullopt};
  if (top_request.options.version) self.version = static_cast<std::uint64_t>(*top_request.options.version);
  else self.revision = top_request.options.revision;
  walk.enter(self);
  const std::string name = top.repo.id.empty() ? top.variant_dir.string() : top.repo.id;
  KHUB_CHECK(walk.visit_children(top, name));
  return walk.take();
}

Status install_dependencies(HubClient& client, std::vector<ResolvedDependency>& dependencies,
                            const KernelRequest& top_request) {
  for (auto& node : dependencies) {
    if (node.local) continue;
    if (auto installed = install_kernel(client, node.kernel, top_request); !installed)
      return std::move(installed).error().note("kernel dependency " + describe(node.dependency) + " of " +
                                               node.dependent);
  }
  return {};
}

std::vector<const ResolvedDependency*> KernelTree::python_only() const {
  std::vector<const ResolvedDependency*> out;
  for (const auto& d : dependencies)
    if (!d.kernel.loadable) out.push_back(&d);
  return out;
}

Expected<KernelTree> fetch_kernel_tree(HubClient& client, const variants::HostInfo& host,
                                       const KernelRequest& request, const protocol::LockFile* lock) {
  KernelTree tree;
  KHUB_TRY(tree.kernel, locate_kernel(client, host, request));
  KHUB_TRY(tree.dependencies, locate_dependencies(client, host, request, tree.kernel, lock));
  KHUB_CHECK(install_kernel(client, tree.kernel, request));
  KHUB_CHECK(install_dependencies(client, tree.dependencies, request));
  return tree;
}

std::string python_only_warning(const ResolvedDependency& d) {
  return "kernel dependency " + describe(d.dependency) + " of " + d.dependent + " has only a Python-only build here (" +
         d.kernel.variant + "): " + (d.kernel.verified ? "downloaded and verified, " : "") +
         "not loaded (the Python `kernels` package loads it)";
}

}  // namespace khub::hub
