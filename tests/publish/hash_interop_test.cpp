// Oracle: metadata.json written by `khub hash` must be read by kernels-data, and its digest must equal
// what kernels-data computes for the same tree and validate cleanly.
#include <gtest/gtest.h>

#include <cstdlib>

#include "../protocol/python_oracle.h"
#include "build_fixture.h"

namespace khub::publish {
namespace {

using HashOracle = khub::testing::BuildFixture;

TEST_F(HashOracle, KernelsDataAcceptsKhubHash) {
  if (!khub::testing::python_has("kernels_data")) GTEST_SKIP() << "kernels_data not importable";
  const std::string v = "torch212-cxx11-cu130-x86_64-linux";
  add_variant(v, R"({"name":"my-kernel","id":"_my_kernel_cuda_abc1234","version":2,"license":"MIT",)"
                 R"("python-depends":["einops"],"backend":{"type":"cuda","archs":["9.0a"]},"unknown":true})");
  write(v + "/_ops.py", "import torch\n");
  write(v + "/layers/__init__.py", "");
  write(v + "/layers/metadata.json", "nested, hashed");
  write(v + "/data/\xc3\xa9t\xc3\xa9.bin", std::string(70000, '\x7f'));
  write(v + "/metadata.json.sigstore", "{}");
  // Bytecode caches are left out by folder name and extension, not by a suffix of either.
  write(v + "/__pycache__/_ops.cpython-312.pyc", "cache");
  write(v + "/layers/stale.pyc", "cache");
  write(v + "/foo__pycache__/m.py", "hashed");
  write(v + "/data/.pyc", "hashed");
  add_variant("torch-cuda", R"({"name":"my-kernel","id":"_my_kernel_cuda_abc1234","version":2,"license":"MIT",)"
                            R"("python-depends":[],"backend":{"type":"cuda"}})");
  const std::string cmd = std::string(KHUB_KHUB_EXE) + " hash " + build().string() + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto r = khub::testing::run_python(
      "import kernels_data as kd, pathlib\n"
      "for v in sorted(pathlib.Path(r'" + build().string() + "').iterdir()):\n"
      "    m = kd.Metadata.read_from_file(v / 'metadata.json')\n"
      "    actual = kd.Digest.hash_variant(kd.DigestAlgorithm.SHA256, v)\n"
      "    m.digest.validate(actual)\n"
      "    print(v.name, str(m.name), m.version, len(m.digest.files), m.digest.files == actual.files)\n");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.output, "torch-cuda my-kernel 2 1 True\n" + v + " my-kernel 2 7 True\n");
}

}  // namespace
}  // namespace khub::publish
