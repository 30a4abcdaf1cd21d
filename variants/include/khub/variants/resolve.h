#pragma once
// Acceptance, preference order and the decision trace, as the Python `kernels` client does them
// (docs/variants.md), with khub's deterministic tie-break: arch before noarch, then name.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "khub/variants/host.h"
#include "khub/variants/variant.h"

namespace khub::variants {

struct Decision {
  Variant variant;
  std::string name;     // the variant's directory name
  bool accepted = false;
  std::string reason;   // upstream's rejection text; empty when accepted
};

struct Resolution {
  std::vector<Decision> decisions;  // every candidate, best first (accepted before rejected)
  [[nodiscard]] const Decision* chosen() const;            // first accepted, or null
  [[nodiscard]] std::vector<std::string> accepted() const; // names, best first
  /// One line per decision: `<v> compatible, preferred ✅`, `<v> compatible ✅`, `<v>: <reason>`.
  [[nodiscard]] std::string trace() const;
};

/// Checks one variant against the host; empty string when accepted, else the reason.
[[nodiscard]] std::string rejection_reason(const Variant& variant, const HostInfo& host);

/// The name noarch variants must carry for this backend: its name, `npu` for CANN.
[[nodiscard]] std::string_view noarch_backend_name(const Backend& backend);

/// Upstream's 5-integer preference key: ascending, accepted first. Equal keys are ties that
/// khub breaks by arch before noarch, then by name in byte order.
[[nodiscard]] std::array<int, 5> sort_key(const Decision& decision);

/// Ranks candidate names; names that do not parse are left out (and listed in `unparsable`).
/// A name given twice counts once, as in upstream's set of directory names.
[[nodiscard]] Resolution resolve_variants(const std::vector<std::string>& candidates, const HostInfo& host,
                                          std::vector<std::string>* unparsable = nullptr);

/// Ranks already parsed candidates, each with its directory name.
[[nodiscard]] Resolution resolve_parsed(std::vector<std::pair<std::string, Variant>> candidates,
                                        const HostInfo& host);

/// Which native kinds a C++ loader runs: khub::kernel (LibTorch in the process) loads torch arch and
/// stable-ABI variants; khub::ffi (no torch; libtvm_ffi.so) loads tvm-ffi variants.
enum class NativeRuntime { Torch, TvmFfi };

/// khub loads only natively loadable kinds: the first accepted variant of a kind `runtime` loads. For a
/// host without torch but with tvm-ffi (what khub::ffi detects) torch variants are all rejected and
/// tvm-ffi ranks before noarch, so the first accepted tvm-ffi variant is Python's choice too.
[[nodiscard]] const Decision* first_loadable(const Resolution& resolution,
                                             NativeRuntime runtime = NativeRuntime::Torch);

/// first_loadable() (a pointer into `resolution`) or a NoVariant error whose notes are the trace lines. `where` names the source,
/// e.g. `kernels-community/relu (revision: v1)`. Nothing accepted: upstream's
/// `Cannot find a build variant for this system in <where>`; only other kinds accepted:
/// `no variant in <where> loads without Python: accepted <names>`.
[[nodiscard]] Expected<const Decision*> choose_loadable(const Resolution& resolution, std::string_view where,
                                                        NativeRuntime runtime = NativeRuntime::Torch);

}  // namespace khub::variants
