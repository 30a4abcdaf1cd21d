#pragma once
// Kernel dependencies (`kernel-depends` in metadata.json) as the Python `kernels` client resolves
// them: every kernel of the tree from the same sources and with the same options as the top one
// (LOCAL_KERNELS first, then the Hub — or the cache offline — or, for a locked load, the commit the
// lock file pins), each node's variant chosen on its own for the same host, a cycle refused, the
// whole tree located before anything is downloaded, then every node downloaded and verified.
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/hub/hub_client.h"
#include "khub/hub/kernel_fetch.h"
#include "khub/protocol/lock.h"
#include "khub/protocol/metadata.h"
#include "khub/variants/host.h"

namespace khub::hub {

/// One kernel of a tree below the top one.
struct ResolvedDependency {
  protocol::KernelDependency dependency;  // as the first kernel that declares it wrote it
  std::string dependent;                  // that kernel: its repo id, or its path for a local kernel
  /// Located (and after install_dependencies: downloaded and verified). `kernel.loadable` false: only
  /// a Python-only build (noarch) fits this host; it is fetched as Python would load it, never loaded
  /// natively (kernels' `get_kernel_dep` hands Python modules to Python code, so no native op of the
  /// dependent can need it).
  FetchedKernel kernel;
  bool local = false;  // found through LOCAL_KERNELS
};

/// `repo (version: N)` or `repo (revision: R)`, as kernels writes a dependency in its messages.
[[nodiscard]] std::string describe(const protocol::KernelDependency& dependency);

/// Locates the kernel-depends tree below `top` (already located or opened; `top_request` gives the
/// options every node shares, its version/revision is the top's own). Returns every dependency once
/// per (repo, version | revision), in load order: each after its own dependencies, depth first in
/// declaration order. `lock`: a locked load, each node at the commit the lock pins for exactly its
/// (repo, version | revision) (no kernel-status.toml redirect). Errors: InvalidMetadata
/// `Cyclic kernel dependency detected: <repo>`; InvalidArgument `Kernel `<repo>` is not locked. …`;
/// else a node's own error (Untrusted, RepoNotFound, RevisionNotFound, NoVariant, OfflineMiss, …)
/// with a note naming the dependency and its dependent.
[[nodiscard]] Expected<std::vector<ResolvedDependency>> locate_dependencies(
    HubClient& client, const variants::HostInfo& host, const KernelRequest& top_request, const FetchedKernel& top,
    const protocol::LockFile* lock = nullptr);

/// install_kernel for each located dependency (a local one was verified when it was opened).
[[nodiscard]] Status install_dependencies(HubClient& client, std::vector<ResolvedDependency>& dependencies,
                                          const KernelRequest& top_request);

struct KernelTree {
  FetchedKernel kernel;                          // the top kernel
  std::vector<ResolvedDependency> dependencies;  // load order (see locate_dependencies)
  /// The dependencies that only have a Python-only build here (reported, not loaded).
  [[nodiscard]] std::vector<const ResolvedDependency*> python_only() const;
};

/// fetch_kernel for a kernel and its whole dependency tree: locate the top, locate the tree, then
/// download and verify every node. Errors: fetch_kernel's and locate_dependencies'.
[[nodiscard]] Expected<KernelTree> fetch_kernel_tree(HubClient& client, const variants::HostInfo& host,
                                                     const KernelRequest& request,
                                                     const protocol::LockFile* lock = nullptr);

/// One warning line for a dependency that is not loaded natively, e.g. `kernel dependency org/einops
/// (version: 1) of org/app has only a Python-only build here (torch-cpu): downloaded and verified,
/// not loaded (the Python kernels package loads it)`.
[[nodiscard]] std::string python_only_warning(const ResolvedDependency& dependency);

}  // namespace khub::hub
