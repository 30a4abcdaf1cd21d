#pragma once
// Fake hosts for resolution tests: no GPU or torch needed.
#include <optional>
#include <string>

#include "khub/variants/host.h"

namespace khub::variants {

inline Backend backend(BackendKind kind, int major, int minor) { return Backend{kind, Version{major, minor}}; }
inline Backend cuda(int major, int minor) { return backend(BackendKind::Cuda, major, minor); }
inline Backend rocm(int major, int minor) { return backend(BackendKind::Rocm, major, minor); }
inline Backend cpu() { return Backend{BackendKind::Cpu, std::nullopt}; }
inline Backend metal() { return Backend{BackendKind::Metal, std::nullopt}; }

/// Linux host with torch (cxx11 ABI) or without it.
inline HostInfo linux_host(Version torch, Backend b, std::string cpu_name = "x86_64") {
  HostInfo h;
  h.os = "linux";
  h.cpu = std::move(cpu_name);
  h.torch = torch;
  h.cxx11_abi = true;
  h.backend = b;
  return h;
}
inline HostInfo linux_host(std::nullopt_t, Backend b, std::string cpu_name = "x86_64") {
  HostInfo h = linux_host(Version{}, b, std::move(cpu_name));
  h.torch.reset();
  h.cxx11_abi.reset();
  return h;
}

/// Apple silicon host with torch 2.10.
inline HostInfo darwin_host(Backend b, std::optional<Version> macos) {
  HostInfo h;
  h.os = "darwin";
  h.cpu = "aarch64";
  h.torch = Version{2, 10};
  h.backend = b;
  h.macos = macos;
  return h;
}

}  // namespace khub::variants
