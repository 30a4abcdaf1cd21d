// Across khub's parts: khub::publish pushes a torch test kernel (kernel-builder layout) to the local
// Hub (khub::localhub, in process on 127.0.0.1), then get_kernel downloads, verifies, loads and calls
// it — no fixture, no Python.
#include <ATen/ATen.h>
#include <cstdlib>
#include <gtest/gtest.h>

#include "../protocol/python_oracle.h"
#include "khub/base/fs.h"
#include "khub/kernel.h"
#include "khub/localhub/server.h"
#include "khub/publish/hash_build.h"
#include "khub/publish/push.h"
#include "khub/publish/sign.h"
#include "test_kernel_build.h"
#include "test_util.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

namespace {
namespace fs = std::filesystem;
using namespace khub;
using test::host_variant;

// A kernel-builder build of test module `module` ("a" or "b", whose id is `id`) for this host, with
// its digest; returns the build folder.
fs::path write_test_build(const fs::path& root, const std::string& name, const std::string& id, const char* module) {
  fs::path vdir = root / "kernel" / "build" / host_variant();
  EXPECT_TRUE(write_file_atomic(vdir / (id + ".abi3.so"),
                                test::slurp(fs::path(KHUB_TORCH_KERNEL_DIR) / module / (id + ".abi3.so"))));
  EXPECT_TRUE(write_file_atomic(vdir / "__init__.py", "from ._ops import ops\n"));
  EXPECT_TRUE(write_file_atomic(vdir / "metadata.json",
                                "{\"name\":\"" + name + "\",\"id\":\"" + id +
                                    "\",\"version\":1,\"license\":\"Apache-2.0\",\"python-depends\":[],"
                                    "\"backend\":{\"type\":\"" + test::backend_type_of(host_variant()) + "\"}}"));
  auto tree = publish::discover_build(root / "kernel");
  EXPECT_TRUE(tree) << tree.error().describe();
  if (tree) {
    EXPECT_TRUE(publish::write_digests(*tree));
  }
  return root / "kernel";
}

// get_kernel options for version 1 from `server`, cached under `cache`.
GetKernelOptions version_1_from(const localhub::Server& server, const fs::path& cache) {
  GetKernelOptions o;
  o.version = 1;
  o.endpoint = server.url();
  o.cache_dir = cache;
  return o;
}

// The local hub in process, with a write token for org/* and org trusted.
std::unique_ptr<localhub::Server> start_hub(const fs::path& root, bool resolve_cache_redirects) {
  localhub::ServerOptions so;
  so.root = root;
  so.threads = 8;
  so.config.tokens.push_back({"hf_e2e_token", "tester", true, {"org"}, {}});
  so.config.trusted_orgs = {"org"};
  so.config.resolve_cache_redirects = resolve_cache_redirects;
  auto server = std::make_unique<localhub::Server>(std::move(so));
  EXPECT_TRUE(server->start());
  return server;
}

Expected<publish::PushResult> push(const fs::path& build, const localhub::Server& server, const std::string& repo) {
  publish::PushOptions po;
  po.endpoint = server.url();
  po.token = "hf_e2e_token";
  po.repo_id = repo;
  po.abi_policy = publish::PushOptions::AbiPolicy::Off;  // built against this VM's glibc, not manylinux
  po.retry.base = std::chrono::milliseconds(1);
  auto transport = http::make_curl_transport();
  KHUB_TRY(auto tree, publish::discover_build(build));
  return publish::push_build(tree, po, *transport);
}

TEST(LocalhubE2E, PushThenGetKernelAndCall) {
  const std::string id = "_khub_test_cpu_bbbbbbb";
  test::TempDir dir;
  fs::path build = write_test_build(dir.path(), "e2e-rmsnorm", id, "b");
  auto server = start_hub(dir.path() / "hub", /*resolve_cache_redirects=*/true);
  auto pushed = push(build, *server, "org/e2e-rmsnorm");
  ASSERT_TRUE(pushed) << pushed.error().describe();
  EXPECT_EQ(pushed->branch, "v1");

  GetKernelOptions o = version_1_from(*server, dir.path() / "cache");
  auto k = get_kernel("org/e2e-rmsnorm", o);
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_TRUE(k->verified());
  EXPECT_EQ(k->id(), id);
  EXPECT_EQ(k->commit(), pushed->commit);
  auto op = k->op("rms_norm");
  ASSERT_TRUE(op) << op.error().describe();
  at::Tensor x = at::randn({3, 32});
  at::Tensor w = at::rand({32});
  at::Tensor y = op->typed<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double)>().call(x, w, 1e-5);
  at::Tensor ref = x * at::rsqrt(x.pow(2).mean(-1, true) + 1e-5) * w * 2.0;  // build b scales by 2
  EXPECT_TRUE(at::allclose(y, ref, 1e-5, 1e-6));
  hub::drop_shared_clients();  // closes the pooled keep-alive connection the server would wait for
  server->stop();
}

#ifdef KHUB_KERNELS_DIR
// The bundled rmsnorm as built here (torch212 and torch-stable-abi210 variants, cpu and cu130) pushed to
// the local hub: khub::get_kernel and the Python `kernels` client (the oracle) both pick the stable-ABI
// cpu variant, load it and compute RMSNorm.
TEST(LocalhubE2E, BundledStableVariantChosenByKhubAndPython) {
  if (!khub::testing::python_has("kernels")) GTEST_SKIP() << "kernels not importable from KHUB_PYTHON";
  test::TempDir dir;
  auto server = start_hub(dir.path() / "hub", /*resolve_cache_redirects=*/false);
  auto pushed = push(fs::path(KHUB_KERNELS_DIR) / "rmsnorm" / "build", *server, "org/rmsnorm");
  ASSERT_TRUE(pushed) << pushed.error().describe();

  GetKernelOptions o = version_1_from(*server, dir.path() / "cache");
  o.backend = "cpu";
  auto k = get_kernel("org/rmsnorm", o);
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_TRUE(k->verified());
  EXPECT_EQ(k->variant().rfind("torch-stable-abi210-cpu-", 0), 0u) << k->variant();
  auto op = k->op("rms_norm");
  ASSERT_TRUE(op) << op.error().describe();
  const at::Tensor x = at::randn({3, 64});
  const at::Tensor y = op->typed<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double)>().call(
      x, std::nullopt, 1e-6);
  EXPECT_TRUE(at::allclose(y, x * at::rsqrt(x.pow(2).mean(-1, true) + 1e-6), 1e-5, 1e-6));

  auto py = khub::testing::run_python(
      "import os, pathlib\n"
      "os.environ['HF_ENDPOINT'] = '" + server->url() + "'\n"
      "os.environ['HF_HOME'] = r'" + (dir.path() / "hf-home").string() + "'\n"
      "os.environ['KERNELS_CACHE'] = r'" + (dir.path() / "py-cache").string() + "'\n"
      "import torch, torch.nn.functional as F\n"
      "from kernels import get_kernel\n"
      "k = get_kernel('org/rmsnorm', version=1, backend='cpu')\n"
      "x = torch.randn(4, 256)\n"
      "assert torch.allclose(k.rms_norm(x, None, 1e-6), F.rms_norm(x, (256,), None, 1e-6), atol=1e-5)\n"
      "print(pathlib.Path(k.__file__).parent.name)\n");
  EXPECT_EQ(py.status, 0) << py.output;
  EXPECT_EQ(py.output, k->variant() + "\n");
  hub::drop_shared_clients();
  server->stop();
}
#endif

// A fresh Ed25519 key pair as PEM (private, public).
std::pair<std::string, std::string> make_key_pair() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  auto pem = [&](bool priv) {
    BIO* bio = BIO_new(BIO_s_mem());
    if (priv) PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
    else PEM_write_bio_PUBKEY(bio, key);
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<std::size_t>(n));
    BIO_free(bio);
    return out;
  };
  auto pair = std::make_pair(pem(true), pem(false));
  EVP_PKEY_free(key);
  return pair;
}

// A signed build pushed to the local hub is verified by get_kernel under each signature policy.
TEST(LocalhubE2E, SignaturePolicyOnLoad) {
  test::TempDir dir;
  fs::path build = write_test_build(dir.path(), "signed", "_khub_test_cpu_aaaaaaa", "a");
  auto [private_pem, public_pem] = make_key_pair();
  auto [other_private, other_public] = make_key_pair();
  ASSERT_TRUE(write_file_atomic(dir.path() / "key.pem", private_pem));
  auto signed_build = publish::sign_build(*publish::discover_build(build), dir.path() / "key.pem");
  ASSERT_TRUE(signed_build) << signed_build.error().describe();
  auto server = start_hub(dir.path() / "hub", /*resolve_cache_redirects=*/false);
  auto pushed = push(build, *server, "org/signed");
  ASSERT_TRUE(pushed) << pushed.error().describe();

  GetKernelOptions o = version_1_from(*server, dir.path() / "cache");
  o.signature_policy = signing::SignaturePolicy::Require;
  o.trusted_keys = {other_public};
  auto refused = get_kernel("org/signed", o);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::Signature) << refused.error().describe();

  o.signature_policy = signing::SignaturePolicy::Warn;
  auto warned = get_kernel("org/signed", o);
  ASSERT_TRUE(warned) << warned.error().describe();
  EXPECT_EQ(warned->signature(), hub::SignatureStatus::Failed);
  ASSERT_FALSE(warned->warnings().empty());
  EXPECT_NE(warned->warnings().back().find("metadata.json.sigstore"), std::string::npos);

  o.signature_policy = signing::SignaturePolicy::Require;
  o.trusted_keys = {other_public, public_pem};
  auto verified = get_kernel("org/signed", o);
  ASSERT_TRUE(verified) << verified.error().describe();
  EXPECT_EQ(verified->signature(), hub::SignatureStatus::Verified);
  hub::drop_shared_clients();
  server->stop();
}

// A keyless-signed build (a Fulcio certificate and a Rekor entry of the synthetic Sigstore instance in
// tests/signing/sigstore_fixture.py) is loaded under Require only from a trusted workflow and under
// the trust root that issued it, as kernels' verify-signature decides.
TEST(LocalhubE2E, KeylessSignatureOnLoad) {
  test::TempDir dir;
  fs::path build = write_test_build(dir.path(), "keyless", "_khub_test_cpu_aaaaaaa", "a");
  const fs::path metadata = build / "build" / host_variant() / "metadata.json";
  const std::string fixture = std::string(KHUB_SOURCE_DIR) + "/tests/signing/sigstore_fixture.py";
  const std::string sign = std::string("\"") + KHUB_PYTHON + "\" " + fixture + " --sign " + (dir.path() / "root").string() +
                           " " + metadata.string() + " >/dev/null";
  ASSERT_EQ(std::system(sign.c_str()), 0) << sign;
  auto server = start_hub(dir.path() / "hub", /*resolve_cache_redirects=*/false);
  auto pushed = push(build, *server, "org/keyless");
  ASSERT_TRUE(pushed) << pushed.error().describe();

  GetKernelOptions o = version_1_from(*server, dir.path() / "cache");
  o.signature_policy = signing::SignaturePolicy::Require;
  // The public-good root did not issue this certificate.
  auto untrusted_root = get_kernel("org/keyless", o);
  ASSERT_FALSE(untrusted_root);
  EXPECT_EQ(untrusted_root.error().code, ErrorCode::Signature);
  EXPECT_NE(untrusted_root.error().message.find("Fulcio"), std::string::npos) << untrusted_root.error().describe();

  o.sigstore_trusted_root = dir.path() / "root" / "trusted_root.json";
  auto verified = get_kernel("org/keyless", o);
  ASSERT_TRUE(verified) << verified.error().describe();
  EXPECT_EQ(verified->signature(), hub::SignatureStatus::Verified);

  // Signed by kernels-community's build workflow, which this caller does not trust.
  o.trusted_identities = {{"org/kernels", {"https://github.com/org/kernels/.github/workflows/build.yaml@refs/heads/main"}}};
  auto other_workflow = get_kernel("org/keyless", o);
  ASSERT_FALSE(other_workflow);
  EXPECT_NE(other_workflow.error().message.find("not a trusted workflow"), std::string::npos)
      << other_workflow.error().describe();
  hub::drop_shared_clients();
  server->stop();
}

}  // namespace
