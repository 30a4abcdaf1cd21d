#pragma once
// The variant names khub's publisher builds for a host: what `khub variants`
// resolves when it is given no candidates file.
#include <string>
#include <vector>

#include "khub/variants/host.h"

namespace khub::variants {

/// The CPU build and, for a GPU host, the build for its backend token, in each kind khub builds:
/// the stable-ABI build for Torch 2.10 and later (`torch-stable-abi210-…`); for the host's Torch
/// version, or else the current bundle's 2.12 and 2.13, the Torch build, named as builders name
/// them (`-cxx11` on Linux, tagless elsewhere); the tvm-ffi 0.1 build (`tvm-ffi01-…`); all with the
/// host's CPU and OS; then noarch `torch-cpu` and `torch-<backend>`.
[[nodiscard]] std::vector<std::string> default_candidates(const HostInfo& host);

}  // namespace khub::variants
