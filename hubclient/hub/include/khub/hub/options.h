#pragma once
// Everything the Hub client needs to know from outside: endpoint, token, cache root, offline mode,
// timeouts, retry schedule, user agent. ClientOptions::from_environment() reads the environment for
// the client; the exceptions are offline_from_environment(), cache_of() (HOME when no cache root is
// set) and khub push's own token reader (cli/cmd_push.cpp).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "khub/base/environment.h"
#include "khub/base/error.h"
#include "khub/http/retry.h"

namespace khub::hub {

/// Receives download progress; must not block. Default methods do nothing. on_bytes returning
/// false cancels the download (Cancelled).
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void on_start(std::string_view /*path*/, std::uint64_t /*total*/) {}
  virtual bool on_bytes(std::string_view /*path*/, std::uint64_t /*done*/, std::uint64_t /*total*/) { return true; }
  virtual void on_complete(std::string_view /*path*/) {}
  /// A transient failure (connect error, 5xx, 429) before a wait and another try: `what` is the
  /// request and the failure in one line, attempt counts from 1 up to `of`.
  virtual void on_retry(std::string_view /*what*/, int /*attempt*/, int /*of*/, std::chrono::milliseconds /*wait*/) {}
};

struct ClientOptions {
  std::string endpoint = "https://huggingface.co";  // no trailing '/'
  std::string token;                                // empty: anonymous
  std::filesystem::path cache_dir;                  // hub cache root; empty: ~/.cache/huggingface/hub
  bool offline = false;                             // true: never any HTTP request
  bool disable_symlinks = false;                    // copy blobs into snapshots instead of linking
  std::chrono::milliseconds etag_timeout{10000};    // HEAD and API calls
  std::chrono::milliseconds download_timeout{10000};  // connect / stall limit of GET bodies
  http::RetryPolicy retry;                          // transient failures: how often, how long
  int max_parallel_downloads = 8;
  std::chrono::milliseconds lock_timeout{10000};    // cache lock wait, then proceed unlocked
  std::vector<std::string> extra_hub_hosts;         // hosts (host[:port]) that may receive the token
  TrustedCas trusted_cas;                           // TLS trust; empty paths: the system's
  // User agent: caller segments first ("app/1.0"), then khub's own unless telemetry is off.
  std::string user_agent;
  bool telemetry = true;
  std::string user_agent_origin;
  std::string ua_backend;  // e.g. cu130; set by the layer that knows the host
  std::string ua_torch;    // e.g. 2.12
  // LOCAL_KERNELS: repo id → local path, consulted by get_kernel before any Hub access.
  std::vector<std::pair<std::string, std::filesystem::path>> local_kernels;
  std::shared_ptr<ProgressSink> progress;

  /// Reads HF_ENDPOINT, HF_TOKEN / HUGGING_FACE_HUB_TOKEN / HF_TOKEN_PATH ($HF_HOME/token),
  /// HF_HUB_DISABLE_IMPLICIT_TOKEN, KERNELS_CACHE > HF_HUB_CACHE > HUGGINGFACE_HUB_CACHE > $HF_HOME/hub >
  /// $XDG_CACHE_HOME/huggingface/hub > ~/.cache/huggingface/hub, HF_HUB_OFFLINE (TRANSFORMERS_OFFLINE),
  /// HF_HUB_ETAG_TIMEOUT, HF_HUB_DOWNLOAD_TIMEOUT, HF_HUB_DISABLE_SYMLINKS, telemetry switches,
  /// HF_HUB_USER_AGENT_ORIGIN, LOCAL_KERNELS and SSL_CERT_FILE / SSL_CERT_DIR. InvalidArgument on a
  /// malformed LOCAL_KERNELS.
  [[nodiscard]] static Expected<ClientOptions> from_environment();
};

/// The User-Agent header: `"; "`-joined `name/value` segments, never an empty one.
[[nodiscard]] std::string render_user_agent(const ClientOptions& options);

/// Parses LOCAL_KERNELS: `repo=path` entries separated by ':' (docs/protocol.md, Variants and
/// layout).
[[nodiscard]] Expected<std::vector<std::pair<std::string, std::filesystem::path>>> parse_local_kernels(
    std::string_view value);

/// True for 1/ON/YES/TRUE in any case.
[[nodiscard]] bool is_truthy(std::string_view value) noexcept;
/// HF_HUB_OFFLINE is truthy when set and non-empty (it decides alone); else TRANSFORMERS_OFFLINE is
/// truthy, as huggingface_hub reads them (ClientOptions::offline's source).
[[nodiscard]] bool offline_from_environment();

/// khub's version string.
[[nodiscard]] std::string_view khub_version() noexcept;

}  // namespace khub::hub
