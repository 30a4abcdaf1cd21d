#pragma once
// Private helpers shared by the get_kernel steps.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "khub/hub/kernel_fetch.h"

namespace khub::hub::detail {

struct StatusRedirect {
  std::string destination;
  std::string revision = "main";
};

/// Parses kernel-status.toml (upstream's error texts); nullopt when it is not a redirect.
[[nodiscard]] Expected<std::optional<StatusRedirect>> parse_kernel_status(std::string_view text);

/// Version → commit (online: refs; offline: cached refs/v<N>, kernel then model folder). Writes
/// refs/v<N> after an online lookup. Adds the "newer version available" warning. May switch
/// `repo` to the model folder offline.
[[nodiscard]] Expected<std::string> resolve_version(HubClient& client, RepoRef& repo, int version,
                                                    std::vector<std::string>& warnings);

/// Branch, tag or commit → commit (online: revision API + refs/<rev>; offline: the cached ref).
[[nodiscard]] Expected<std::string> resolve_revision(HubClient& client, const RepoRef& repo,
                                                     std::string_view revision);

/// The trusted-publisher rule: Untrusted unless `repo_id`'s org is a trusted
/// kernel publisher; skipped (with upstream's warning) offline.
[[nodiscard]] Status check_publisher_trust(HubClient& client, const std::string& repo_id,
                                           std::vector<std::string>& warnings);

/// Chooses the loadable variant among `names` or returns NoVariant with the trace.
[[nodiscard]] Expected<std::string> choose_variant(const std::vector<std::string>& names,
                                                   const variants::HostInfo& host, const std::string& where,
                                                   variants::Resolution& resolution,
                                                   variants::NativeRuntime runtime = variants::NativeRuntime::Torch);

/// Checks backend.archs against the device; Unsupported with upstream's text.
[[nodiscard]] Status check_device_arch(const FetchedKernel& kernel, const variants::HostInfo& host);

/// Removes a cached snapshot file and the blob it links to, only when that blob is a file of its own
/// repo folder's blobs/ (a link planted to point elsewhere loses the link; what it points at stays).
/// True when the file was removed.
bool delete_cached_file(const std::filesystem::path& file);

/// After the digest check: verifies metadata.json.sigstore under `policy` and records the outcome
/// in `kernel.signature` (Verified / Failed); Require turns a failure into a Signature error, Warn
/// into a warning, Ignore leaves the presence report of verify_variant.
[[nodiscard]] Status apply_signature_policy(FetchedKernel& kernel, const KernelRequest& request);

}  // namespace khub::hub::detail
