#pragma once
// `build/<variant>/metadata.json`, as kernels-data's `metadata.rs` reads and
// writes it: required keys `name`, `id`, `version`, `license`, `python-depends`, `backend.type`;
// unknown keys ignored on read; written as serde_json pretty output (2-space indent, kebab-case keys
// in a fixed order, no trailing newline).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"

namespace khub::protocol {

enum class BackendType { Cann, Cpu, Cuda, Metal, Neuron, Rocm, Tpu, Xpu };

/// `cann`, `cpu`, `cuda`, `metal`, `neuron`, `rocm`, `tpu`, `xpu`.
[[nodiscard]] std::string_view to_string(BackendType type) noexcept;
[[nodiscard]] std::optional<BackendType> parse_backend_type(std::string_view name) noexcept;

struct BackendInfo {
  BackendType type = BackendType::Cuda;
  std::optional<std::vector<std::string>> archs;  // cuda/rocm only, e.g. {"9.0a"}; omitted if unset
  friend bool operator==(const BackendInfo&, const BackendInfo&) = default;
};

enum class DigestAlgorithm { Sha256, Sha512 };

/// `sha256` / `sha512` (the JSON spelling); `SHA256` / `SHA512` appear in violation texts.
[[nodiscard]] std::string_view to_string(DigestAlgorithm algorithm) noexcept;

/// Base64 file hashes of one variant directory, keyed by `/`-separated relative path (sorted).
struct Digest {
  DigestAlgorithm algorithm = DigestAlgorithm::Sha256;
  std::map<std::string, std::string> files;
  friend bool operator==(const Digest&, const Digest&) = default;
};

/// One `kernel-depends` entry: exactly one of `version` / `revision` is set.
struct KernelDependency {
  std::string repo_id;
  std::optional<std::uint64_t> version;
  std::optional<std::string> revision;
  friend bool operator==(const KernelDependency&, const KernelDependency&) = default;
};

struct BuilderProvenance {
  std::string version;
  std::optional<std::string> commit;  // 40 or 64 lower-case hex; set together with dirty
  std::optional<bool> dirty;
  friend bool operator==(const BuilderProvenance&, const BuilderProvenance&) = default;
};

struct SourceProvenance {
  std::string commit;  // 40 or 64 lower-case hex (legacy key `sha` is read as `commit`)
  bool dirty = false;
  friend bool operator==(const SourceProvenance&, const SourceProvenance&) = default;
};

struct Provenance {
  BuilderProvenance kernel_builder;
  std::optional<SourceProvenance> kernel;
  friend bool operator==(const Provenance&, const Provenance&) = default;
};

struct KernelMetadata {
  std::string name;     // valid kernel name (is_valid_kernel_name)
  std::string id;       // ops namespace = native module stem, e.g. `_relu_cuda_abc1234`
  std::uint64_t version = 0;
  std::string license;
  std::optional<std::string> upstream;  // git URLs, omitted when unset
  std::optional<std::string> source;
  std::vector<std::string> python_depends;
  std::vector<KernelDependency> kernel_depends;  // always written, default []
  BackendInfo backend;
  std::optional<Digest> digest;
  std::optional<Provenance> provenance;
  friend bool operator==(const KernelMetadata&, const KernelMetadata&) = default;

  /// `name` with `-` replaced by `_`.
  [[nodiscard]] std::string python_name() const;
  /// True when the provenance records a dirty kernel or kernel-builder tree.
  [[nodiscard]] bool is_dirty() const;
};

/// Parses metadata JSON. On failure returns InvalidMetadata whose message is serde's text, e.g.
/// ``missing field `name` at line 9 column 1`` or ``unknown variant `foo`, expected one of …``.
/// Positions follow serde_json::from_slice (checked against kernels-data); khub's own extra checks
/// (kernel-depends selectors, provenance hashes) use khub wording.
[[nodiscard]] Expected<KernelMetadata> parse_metadata(std::string_view json);

/// Reads and parses a file. Errors: Io ``Failed to open `"<path>"`: <reason>`` or InvalidMetadata
/// ``Cannot parse metadata from `"<path>"`: <serde text>`` (positions as serde_json::from_reader).
[[nodiscard]] Expected<KernelMetadata> read_metadata(const std::filesystem::path& path);

/// serde_json pretty form: keys in metadata.rs order (name, id, version, license, upstream, source,
/// python-depends, kernel-depends, backend, digest, provenance), 2-space indent, non-ASCII kept as
/// UTF-8, digest files sorted, no trailing newline. parse_metadata(serialize_metadata(m)) == m.
[[nodiscard]] std::string serialize_metadata(const KernelMetadata& metadata);

/// Writes serialize_metadata(metadata) to `path` through a sibling temp file and a rename, so a
/// failure leaves the old file untouched. Returns Io on failure.
[[nodiscard]] Status write_metadata(const std::filesystem::path& path, const KernelMetadata& metadata);

/// The kernel-name rule of build.toml and metadata.json: `^[a-z][-a-z0-9]*[a-z0-9]$`.
[[nodiscard]] bool is_valid_kernel_name(std::string_view name) noexcept;

/// Checks a git URL (https, http, git, ssh, git+ssh, git+https, git+http, or scp-like
/// `user@host:path`). The error text follows kernels-data, e.g. ``unsupported scheme `ftp` in git URL
/// `ftp://x`, expected one of: https, http, git, ssh, git+ssh, git+https, git+http``.
[[nodiscard]] Status validate_git_url(std::string_view url);

}  // namespace khub::protocol
