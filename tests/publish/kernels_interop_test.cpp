// Oracle: the Python `kernels` client loads what `khub push` published. A hashed and signed noarch
// variant goes to the local Hub (trusted organisation) through khub's push; `get_kernel(repo,
// version=1)` must resolve v1, download, accept the metadata and run the kernel on CPU.
#include <gtest/gtest.h>

#include <cstdlib>

#include "../protocol/python_oracle.h"
#include "key_fixture.h"
#include "khub/hub/kernel_tree.h"
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

// kernel-depends: three pure-Python kernels pushed by khub from build.toml (app -> mid at version 1
// and leaf at a commit; mid -> leaf at version 1). kernels resolves the tree from the metadata.json
// files push wrote and loads it (each __init__.py calls get_kernel_dep), and khub's resolution of
// the same tree names the same kernels, commits and variants in the same order.
TEST_F(KernelsClient, ResolvesTheDependencyTreeKhubPushed) {
  auto publish = [&](const std::string& name, const std::string& depends, const std::string& init) {
    const auto dir = root_ / name;
    const auto variant = dir / "build" / "torch-cpu";
    std::filesystem::create_directories(variant);
    std::ofstream(variant / "__init__.py") << init;
    std::ofstream(variant / "metadata.json")
        << R"({"name":")" + name + R"(","id":"_)" + name + R"(_cpu_0123abc","version":1,"license":"Apache-2.0",)"
        << R"("python-depends":[],"kernel-depends":[],"backend":{"type":"cpu"}})";
    std::ofstream(dir / "build.toml") << "[general]\nname = \"" + name + "\"\nversion = 1\nedition = 5\nlicense = "
                                         "\"Apache-2.0\"\nbackends = [\"cpu\"]\nkernel-depends = " + depends +
                                         "\n[torch-noarch]\n";
    auto tree = discover_build(dir / "build");
    EXPECT_TRUE(tree && write_digests(*tree));
    auto o = options();
    o.repo_id = "khub-test/" + name;
    auto pushed = push(o, dir / "build");
    EXPECT_TRUE(pushed) << pushed.error().describe();
    return pushed ? pushed->commit : std::string();
  };
  const std::string leaf = publish("leaf", "[]", "def value():\n    return 'leaf'\n");
  const std::string dep = "from kernels import get_kernel_dep\n";
  publish("mid", R"([{ repo-id = "khub-test/leaf", version = 1 }])",
          dep + "_leaf = get_kernel_dep('khub-test/leaf')\n\ndef value():\n    return 'mid>' + _leaf.value()\n");
  publish("app", R"([{ repo-id = "khub-test/mid", version = 1 }, { repo-id = "khub-test/leaf", revision = ")" + leaf +
                     R"(" }])",
          dep + "_mid = get_kernel_dep('khub-test/mid')\n\ndef value():\n    return 'app>' + _mid.value()\n");

  ::setenv("HF_ENDPOINT", server_->url().c_str(), 1);
  ::setenv("HF_TOKEN", kToken, 1);
  ::setenv("HF_HOME", (root_ / "hf-home").c_str(), 1);
  ::setenv("KERNELS_CACHE", (root_ / "kernels-cache").c_str(), 1);
  auto r = khub::testing::run_python(
      "from kernels import get_kernel\n"
      "from kernels._rust import KernelDependency, KernelVersion\n"
      "from kernels.deps import resolve_kernel_tree\n"
      "from kernels.hf_hub import _get_hf_api\n"
      "from kernels.resolver import HubResolver\n"
      "api = _get_hf_api()\n"
      "tree = resolve_kernel_tree(api=api, kernel=KernelDependency('khub-test/app', KernelVersion.Version(1)),\n"
      "                           backend='cpu', resolver=HubResolver(trust_remote_code=False))\n"
      "seen = []\n"
      "def walk(node):\n"
      "    for d in node.deps.values():\n"
      "        walk(d)\n"
      "    loc = node.location\n"
      "    line = f'{loc.repo_id} {loc.revision} {loc.variant_str}'\n"
      "    if line not in seen:\n"
      "        seen.append(line)\n"
      "walk(tree)\n"
      "print('\\n'.join(seen))\n"
      "print(get_kernel('khub-test/app', version=1, backend='cpu').value())\n");
  for (const char* name : {"HF_ENDPOINT", "HF_TOKEN", "HF_HOME", "KERNELS_CACHE"}) ::unsetenv(name);
  ASSERT_EQ(r.status, 0) << r.output;

  hub::ClientOptions co;
  co.endpoint = server_->url();
  co.cache_dir = root_ / "khub-cache";
  hub::HubClient client(co);
  variants::HostInfo host;
  host.torch = variants::Version{2, 12};
  host.cxx11_abi = true;
  host.backend = variants::Backend{variants::BackendKind::Cpu, std::nullopt};
  hub::KernelRequest request;
  request.repo_id = "khub-test/app";
  request.options.version = 1;
  request.python_only_ok = true;  // the top kernel is pure Python too; khub resolves it as kernels does
  auto tree = hub::fetch_kernel_tree(client, host, request);
  ASSERT_TRUE(tree) << tree.error().describe();
  std::string ours;  // one line per kernel, as the script prints them
  auto add = [&](const hub::FetchedKernel& k) {
    const std::string line = k.repo.id + " " + k.commit + " " + k.variant + "\n";
    if (ours.find(line) == std::string::npos) ours += line;
  };
  for (const auto& d : tree->dependencies) add(d.kernel);
  add(tree->kernel);
  EXPECT_EQ(r.output, ours + "app>mid>leaf\n");
  EXPECT_EQ(tree->dependencies.size(), 3u);  // leaf by version (under mid), mid, leaf by commit
}

}  // namespace
}  // namespace khub::publish
