// Oracle: the Python `kernels` client loads what `khub push` published. A hashed and signed noarch
// variant goes to the local Hub (trusted organisation) through khub's push; `get_kernel(repo,
// version=1)` must resolve v1, download, accept the metadata and run the kernel on CPU.
#include <gtest/gtest.h>

#include <cstdlib>

#include "../protocol/python_oracle.h"
#include "key_fixture.h"
#include "khub/publish/sign.h"
#include "push_fixture.h"

namespace khub::publish {
namespace {

class KernelsClient : public khub::testing::PushFixture {
 protected:
  void SetUp() override {
    if (!khub::testing::python_has("kernels")) GTEST_SKIP() << "kernels not importable from KHUB_PYTHON";
    khub::testing::PushFixture::SetUp();
  }
  localhub::ServerConfig config() const override {
    auto c = khub::testing::PushFixture::config();
    c.trusted_orgs.push_back("khub-test");
    return c;
  }
};

TEST_F(KernelsClient, GetKernelLoadsKhubPush) {
  add_variant("torch-cpu", R"({"name":"relu","id":"_relu_cpu_0123abc","version":1,"license":"Apache-2.0",)"
                           R"("python-depends":[],"backend":{"type":"cpu"}})");
  write("torch-cpu/__init__.py",
        "import torch\n\ndef relu(x: torch.Tensor) -> torch.Tensor:\n    return torch.clamp(x, min=0)\n");
  write("torch-cpu/layers/__init__.py", "");
  write("CARD.md", "# relu\n");
  hash_all();
  ASSERT_TRUE(khub::testing::write_private_key("ed25519", root_ / "key.pem"));
  ASSERT_TRUE(sign_build(*discover_build(build()), root_ / "key.pem"));
  auto pushed = push(options());
  ASSERT_TRUE(pushed) << pushed.error().describe();

  ::setenv("HF_ENDPOINT", server_->url().c_str(), 1);
  ::setenv("HF_TOKEN", kToken, 1);
  ::setenv("HF_HOME", (root_ / "hf-home").c_str(), 1);
  ::setenv("KERNELS_CACHE", (root_ / "kernels-cache").c_str(), 1);
  auto r = khub::testing::run_python(
      "import torch\n"
      "from kernels import get_kernel\n"
      "k = get_kernel('khub-test/relu', version=1, backend='cpu')\n"
      "print(k.relu(torch.tensor([-1.0, 2.0, -3.0])).tolist())\n");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output, "[0.0, 2.0, 0.0]\n");
  for (const char* name : {"HF_ENDPOINT", "HF_TOKEN", "HF_HOME", "KERNELS_CACHE"}) {
    ::unsetenv(name);
  }
}

}  // namespace
}  // namespace khub::publish
