#pragma once
// Build-variant names as kernel-builder writes them and the Python `kernels` client parses them
// (docs/variants.md, Grammar): torch arch (`torch212-cxx11-cu130-x86_64-linux`), stable ABI
// (`torch-stable-abi211-cu128-x86_64-linux`), tvm-ffi (`tvm-ffi01-cu130-x86_64-linux`),
// noarch (`torch-cuda`) and the legacy `torch-universal`.
#include <optional>
#include <string>
#include <string_view>

#include "khub/base/error.h"

namespace khub::variants {

/// A dotted version as variant names carry it: `cu128` → {12, 8}, `torch210` → {2, 10}.
struct Version {
  int major = 0;
  int minor = 0;
  friend auto operator<=>(const Version&, const Version&) = default;
  [[nodiscard]] std::string str() const;  // "12.8"
};

/// Reads "major.minor" with optional further numeric parts, which are dropped ("2.12.1" → 2.12);
/// none for anything else.
[[nodiscard]] std::optional<Version> parse_dotted_version(std::string_view text);

enum class BackendKind { Cpu, Cuda, Rocm, Xpu, Metal, Cann, Neuron, Tpu };

/// Whether the backend carries a version in names and keys (Cuda, Rocm, Xpu, Cann).
[[nodiscard]] bool has_version(BackendKind kind);

/// The kind for a backend name (`cuda`, `cpu`, …; not `npu`), or none.
[[nodiscard]] std::optional<BackendKind> backend_kind_from_name(std::string_view name);

/// The compute backend of an arch variant or a host: kind plus version for cu/rocm/xpu/cann.
struct Backend {
  BackendKind kind = BackendKind::Cpu;
  std::optional<Version> version;  // set for Cuda, Rocm, Xpu, Cann
  friend bool operator==(const Backend&, const Backend&) = default;
  /// The variant token: `cpu`, `cu128`, `rocm70`, `xpu20253`, `cann83`, `metal`, `neuron`, `tpu`.
  [[nodiscard]] std::string token() const;
  /// The backend name: `cpu`, `cuda`, `rocm`, `xpu`, `cann`, `metal`, `neuron`, `tpu`.
  [[nodiscard]] std::string_view name() const;
};

enum class FrameworkKind { Torch, TorchStableAbi, TvmFfi };

struct Framework {
  FrameworkKind kind = FrameworkKind::Torch;
  Version version;
  std::optional<bool> cxx11_abi;  // Torch only: true = `-cxx11`, false = `-cxx98`, none = tagless
  friend bool operator==(const Framework&, const Framework&) = default;
};

struct ArchVariant {
  Framework framework;
  Backend backend;
  std::string cpu;  // free string, e.g. x86_64
  std::string os;   // free string, e.g. linux
  friend bool operator==(const ArchVariant&, const ArchVariant&) = default;
};

struct NoarchVariant {
  std::string backend_name;  // everything after `torch-`; `universal` for the legacy name
  friend bool operator==(const NoarchVariant&, const NoarchVariant&) = default;
  [[nodiscard]] bool is_universal() const { return backend_name == "universal"; }
};

struct Variant {
  std::optional<ArchVariant> arch;      // exactly one of arch / noarch is set
  std::optional<NoarchVariant> noarch;
  friend bool operator==(const Variant&, const Variant&) = default;
  [[nodiscard]] bool is_arch() const { return arch.has_value(); }
  /// Renders the canonical name; format(parse(x)) == x for every valid x.
  [[nodiscard]] std::string name() const;
};

/// Parses a variant directory name. Errors (code InvalidVariant) carry upstream's exact text, e.g.
/// `Unknown backend variant string: 'foo'`.
[[nodiscard]] Expected<Variant> parse_variant(std::string_view name);

/// Parses a backend token (`cu128`, `cpu`, …) as a variant's backend.
[[nodiscard]] Expected<Backend> parse_backend(std::string_view token);

}  // namespace khub::variants
