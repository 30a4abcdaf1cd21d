#pragma once
// Small helpers shared by the fuzz targets: input as text, a private temp folder per process.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace khub_fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A folder under $TMPDIR unique to this process, removed at exit.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    std::error_code ec;
    auto base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    auto d = base / ("khub-fuzz-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d, ec);
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code e;
      std::filesystem::remove_all(scratch(), e);
    });
    return d;
  }();
  return dir;
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// KHUB_FUZZ_VERBOSE=1: the targets print what each input led to (to check seeds reach deep).
inline bool verbose() {
  static const bool on = std::getenv("KHUB_FUZZ_VERBOSE") != nullptr;
  return on;
}

/// Stops the run with a message: a broken documented invariant counts as a crash.
[[noreturn]] inline void invariant_failed(const char* what) {
  std::fprintf(stderr, "khub fuzz: invariant broken: %s\n", what);
  std::abort();
}

}  // namespace khub_fuzz
