#pragma once
// `build.toml`: the kernel project's declaration that metadata.json is made
// from. Edition 5 is parsed strictly (unknown keys rejected in every table); a file without
// `edition` is read as edition 4 and upgraded in memory with upstream's warning.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/protocol/metadata.h"

namespace khub::protocol {

enum class FrameworkSection { Torch, TorchNoarch, TvmFfi };

struct KernelComponent {
  std::string backend;  // cpu, cuda, metal, rocm, xpu
  std::vector<std::string> depends;
  std::vector<std::string> src;
  std::vector<std::string> include;
  std::vector<std::string> cuda_capabilities;  // cuda only
  std::vector<std::string> rocm_archs;         // rocm only
};

struct BuildConfig {
  // [general]
  std::string name;
  std::uint64_t version = 0;
  int edition = 5;
  std::string license;
  std::vector<std::string> backends;
  std::optional<std::string> upstream;
  std::optional<std::string> source;
  std::vector<std::string> python_depends;
  std::vector<KernelDependency> kernel_depends;
  std::optional<std::string> hub_repo_id;  // [general.hub] repo-id
  std::optional<std::string> hub_branch;   // [general.hub] branch
  std::map<std::string, std::vector<std::string>> backend_python_depends;  // [general.cuda] etc.
  std::map<std::string, std::vector<KernelDependency>> backend_kernel_depends;  // [general.cuda|xpu|neuron]
  // framework
  FrameworkSection framework = FrameworkSection::Torch;
  std::vector<std::string> framework_src;
  std::vector<std::string> pyext;  // default {"py", "pyi"}
  std::vector<std::string> noarch_cuda_capabilities;
  std::optional<std::string> stable_abi;  // [torch] stable-abi as a version string
  // [kernel.<name>]
  std::map<std::string, KernelComponent> kernels;
  /// Warnings met while reading (e.g. the edition-4 upgrade notice).
  std::vector<std::string> warnings;

  [[nodiscard]] std::string python_name() const;
  /// The kernel-depends a variant of `backend` (metadata backend.type: cuda, xpu, …) declares:
  /// [general] kernel-depends, then those of [general.<backend>].
  [[nodiscard]] std::vector<KernelDependency> kernel_depends_for(std::string_view backend) const;
  /// Sorted union of the CUDA capabilities of all cuda kernels (metadata `backend.archs`).
  [[nodiscard]] std::vector<std::string> cuda_archs() const;
};

/// Parses build.toml text. Errors (InvalidMetadata): TOML syntax with line/column,
/// `unsupported build edition N; upgrade kernel-builder`, `unknown field `x` in [table]`,
/// `missing field `name` in [general]`, invalid kernel name, version or backend.
[[nodiscard]] Expected<BuildConfig> parse_build_config(std::string_view toml_text);

/// Reads a file; Io when it cannot be read.
[[nodiscard]] Expected<BuildConfig> read_build_config(const std::filesystem::path& path);

}  // namespace khub::protocol
