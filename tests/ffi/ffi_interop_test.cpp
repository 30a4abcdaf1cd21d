// khub::ffi against the official Python client (label interop): the bundled rmsnorm pushed to the local hub
// with every variant; in a venv WITHOUT torch but with apache-tvm-ffi (.venv-tvm-ffi, scripts/setup) the
// Python `kernels` client loads the tvm-ffi build and computes RMSNorm on numpy arrays, and khub::ffi
// chooses the same variant, with the backend detected and with backend="cpu".
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "ffi_localhub_support.h"
#include "ffi_test_support.h"
#include "test_util.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;
using namespace khub::ffi;
using namespace khub::ffi::test;

struct PyRun {
  int status = -1;
  std::string out;
};

PyRun run_torchfree_python(const fs::path& script_file, const std::string& script) {
  std::ofstream(script_file) << script;
  PyRun r;
  const std::string cmd = std::string("\"") + KHUB_FFI_PYTHON + "\" " + script_file.string() + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) r.out.append(buf.data(), n);
  const int st = ::pclose(pipe);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(FfiInterop, TorchFreePythonClientAndKhubChooseAndComputeTheSame) {
  if (!fs::exists(KHUB_FFI_PYTHON)) GTEST_SKIP() << KHUB_FFI_PYTHON << " missing: run scripts/setup";
  khub::test::TempDir dir;
  auto server = start_hub(dir.path() / "hub");
  for (const std::string name : {"rmsnorm", "geglu"}) {
    auto pushed = push(fs::path(KHUB_KERNELS_DIR) / name / "build", *server, "org/" + name);
    ASSERT_TRUE(pushed) << pushed.error().describe();
  }
  for (const std::string backend : {"cpu", ""}) {
    SCOPED_TRACE("backend '" + backend + "'");
    GetKernelOptions o = version_1_from(*server, dir.path() / "cache");
    o.backend = backend;
    auto k = get_kernel("org/rmsnorm", o);
    ASSERT_TRUE(k) << k.error().describe();
    EXPECT_EQ(k->variant().rfind("tvm-ffi01-", 0), 0u) << k->variant();
    const std::string py_backend = backend.empty() ? "None" : "'" + backend + "'";
    auto py = run_torchfree_python(
        dir.path() / "oracle.py",
        "import os, pathlib, importlib.util\n"
        "assert importlib.util.find_spec('torch') is None, 'this venv must not have torch'\n"
        "os.environ['HF_ENDPOINT'] = '" + server->url() + "'\n"
        "os.environ['HF_HOME'] = r'" + (dir.path() / "hf-home").string() + "'\n"
        "os.environ['KERNELS_CACHE'] = r'" + (dir.path() / "py-cache").string() + "'\n"
        "import numpy as np\n"
        "from kernels import get_kernel\n"
        "k = get_kernel('org/rmsnorm', version=1, backend=" + py_backend + ")\n"
        "x = np.random.default_rng(0).standard_normal((4, 256), dtype=np.float32)\n"
        "w = (1 + 0.1 * np.random.default_rng(1).standard_normal(256)).astype(np.float32)\n"
        "ref = x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6) * w\n"
        "y = k.rms_norm(x, w, 1e-6)\n"
        "assert np.abs(y - ref).max() < 1e-5, np.abs(y - ref).max()\n"
        "out, s = k.fused_add_rms_norm(x, x, w, 1e-6)\n"
        "assert (s == x + x).all()\n"
        "g = get_kernel('org/geglu', version=1, backend=" + py_backend + ")\n"
        "xg = np.random.default_rng(2).standard_normal((3, 128), dtype=np.float32)\n"
        "assert g.geglu(xg).shape == (3, 64)\n"
        "print(pathlib.Path(k.__file__).parent.name)\n");
    ASSERT_EQ(py.status, 0) << py.out;
    std::string last = py.out.substr(0, py.out.size() - 1);  // the variant dir Python imported: the last line
    last = last.substr(last.rfind('\n') + 1);
    EXPECT_EQ(last, k->variant()) << py.out;
  }
  hub::drop_shared_clients();
  server->stop();
}

}  // namespace
