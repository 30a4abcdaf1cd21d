#pragma once
// Runs a shell command for tests and returns its exit code, stdout and stderr.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace khub::variants {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// A fresh directory under the system temp dir, named after `tag` and the process id.
inline std::filesystem::path scratch_dir(const std::string& tag) {
  auto dir = std::filesystem::temp_directory_path() / ("khub-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Runs `command` with sh; stderr is captured through a file next to `scratch`.
inline ProcessResult run_command(const std::string& command, const std::filesystem::path& scratch) {
  const auto err_file = scratch / "stderr.txt";
  ProcessResult r;
  FILE* pipe = ::popen((command + " 2>" + quote(err_file.string())).c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_text(err_file);
  return r;
}

}  // namespace khub::variants
