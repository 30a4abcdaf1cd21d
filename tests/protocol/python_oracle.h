#pragma once
// Runs a Python snippet with the project venv (KHUB_PYTHON) to ask an upstream package (kernels-data,
// kernel-abi-check, sigstore-models) for its answer. Tests skip when the package is unavailable.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace khub::testing {

struct PythonResult {
  int status = -1;
  std::string output;  // stdout only
};

inline PythonResult run_python(const std::string& script) {
  namespace fs = std::filesystem;
  static int counter = 0;
  auto path = fs::temp_directory_path() /
              ("khub-oracle-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".py");
  std::ofstream(path) << script;
  PythonResult r;
  std::string cmd = std::string("\"") + KHUB_PYTHON + "\" " + path.string() + " 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe) {
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
    int st = ::pclose(pipe);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  fs::remove(path);
  return r;
}

/// True when `import <module>` works in the venv.
inline bool python_has(const std::string& module) {
  return run_python("import " + module + "\nprint('ok')\n").output == "ok\n";
}

}  // namespace khub::testing
