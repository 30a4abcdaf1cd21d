// The khub executable's hub commands as processes against a loopback Hub: output, JSON, exit codes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fixture_hub.h"
#include "test_util.h"

namespace {
namespace fs = std::filesystem;
using khub::test::FixtureHub;
using khub::test::TempDir;

const std::string kVariant = "torch212-cxx11-cu130-x86_64-linux";

using khub::test::Run;

Run khub_cli(const std::string& env, const std::string& args) {
  std::string cmd = "env -u HF_TOKEN " + env + " " + KHUB_BINARY_DIR "/bin/khub " + args + " 2>/dev/null";
  return khub::test::run_shell(cmd);
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    commit_ = hub_.commit("org/relu", "v1", khub::test::sample_variant_files(kVariant, "_relu_cuda_abc1234"));
    hub_.set_trusted("org", true);
    env_ = "HF_ENDPOINT=" + hub_.endpoint() + " HF_HUB_CACHE=" + cache_.path().string();
  }
  FixtureHub hub_;
  TempDir cache_;
  std::string commit_, env_;
};

TEST_F(CliTest, DownloadVerifyInfoVersions) {
  auto dl = khub_cli(env_, "download org/relu --version 1 --torch 2.12 --backend cuda --host /dev/null");
  // --host /dev/null is not JSON: a usage error.
  EXPECT_EQ(dl.code, 2);
  // Command-line mistakes answer --json with the error object too.
  for (const std::string args : {"download --json", "info org/relu --bogus --json", "nonsense --json",
                                 "download org/relu --revision '' --json"}) {
    auto usage = khub_cli(env_, args);
    EXPECT_EQ(usage.code, 2) << args;
    const auto j = nlohmann::json::parse(usage.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << args << ": " << usage.out;
    EXPECT_EQ(j["error"]["code"], "InvalidArgument") << args;
  }
  std::ofstream(cache_.path() / "host.json")
      << R"({"os":"linux","cpu":"x86_64","torch":"2.12","cxx11_abi":true,"backend":"cuda","backend_version":"13.0","tvm_ffi":null,"macos":null})";
  const std::string host = " --host " + (cache_.path() / "host.json").string();
  dl = khub_cli(env_, "download org/relu --version 1 --quiet" + host);
  ASSERT_EQ(dl.code, 0) << dl.out;
  EXPECT_EQ(dl.out, (cache_.path() / "kernels--org--relu" / "snapshots" / commit_).string() + "\n");
  auto v = khub_cli(env_, "verify org/relu --version 1 --json");
  ASSERT_EQ(v.code, 0) << v.out;
  EXPECT_TRUE(nlohmann::json::parse(v.out)["ok"].get<bool>());
  auto info = khub_cli(env_, "info org/relu --json" + host);
  ASSERT_EQ(info.code, 0) << info.out;
  auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["commit"], commit_);
  EXPECT_EQ(j["host_variant"], kVariant);
  EXPECT_EQ(j["metadata"]["id"], "_relu_cuda_abc1234");
  EXPECT_EQ(j["trusted_publisher"], true);
  auto vs = khub_cli(env_, "versions org/relu --json" + host);
  ASSERT_EQ(vs.code, 0) << vs.out;
  auto vj = nlohmann::json::parse(vs.out);
  ASSERT_EQ(vj["versions"].size(), 1u);
  EXPECT_EQ(vj["versions"][0]["version"], 1);
  EXPECT_EQ(vj["versions"][0]["host_variant"], kVariant);
  // The text forms name the same pick.
  auto info_text = khub_cli(env_, "info org/relu" + host);
  ASSERT_EQ(info_text.code, 0) << info_text.out;
  EXPECT_NE(info_text.out.find("org/relu (kernel)  v1 = " + commit_ + "\n"), std::string::npos) << info_text.out;
  EXPECT_NE(info_text.out.find("trusted publisher: yes\n"), std::string::npos) << info_text.out;
  EXPECT_NE(info_text.out.find("this host: " + kVariant + "\n"), std::string::npos) << info_text.out;
  auto vs_text = khub_cli(env_, "versions org/relu" + host);
  ASSERT_EQ(vs_text.code, 0) << vs_text.out;
  EXPECT_EQ(vs_text.out, "v1  " + commit_ + "  " + std::to_string(vj["versions"][0]["variants"].size()) +
                             " variant(s)  this host: " + kVariant + "\n");
  // A host no variant fits: the pick is null in JSON and "none" in text.
  const std::string cpu_host = host + " --backend cpu";
  auto none = khub_cli(env_, "versions org/relu --json" + cpu_host);
  ASSERT_EQ(none.code, 0) << none.out;
  EXPECT_TRUE(nlohmann::json::parse(none.out)["versions"][0]["host_variant"].is_null()) << none.out;
  auto none_text = khub_cli(env_, "info org/relu" + cpu_host);
  ASSERT_EQ(none_text.code, 0) << none_text.out;
  EXPECT_NE(none_text.out.find("this host: none\n"), std::string::npos) << none_text.out;

  // A damaged blob: verify names the file and exits 1.
  fs::path so = cache_.path() / "kernels--org--relu" / "snapshots" / commit_ / "build" / kVariant /
                "_relu_cuda_abc1234.abi3.so";
  fs::path blob = fs::canonical(so);
  fs::permissions(blob, fs::perms::owner_write, fs::perm_options::add);
  { std::ofstream(blob, std::ios::binary | std::ios::in | std::ios::out) << "XX"; }
  auto bad = khub_cli(env_, "verify org/relu --version 1 --json");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("_relu_cuda_abc1234.abi3.so"), std::string::npos) << bad.out;
  // A version that is not cached: verify says it reads the cache, not that the Hub is offline.
  auto uncached = khub_cli(env_, "verify org/relu --version 7 --json");
  EXPECT_EQ(uncached.code, 1);
  const auto error = nlohmann::json::parse(uncached.out)["error"];
  EXPECT_EQ(error["message"], "version 7 of 'org/relu' is not in the cache; khub verify checks the cache only");
  EXPECT_EQ(error["hint"], "run `khub download org/relu --version 7` first (`khub versions org/relu` lists the versions)");
}

// A variant only partly downloaded (one file, by either client) is incomplete, not damaged: verify
// reports it and passes, unless that variant is asked for by name.
TEST_F(CliTest, VerifyTellsPartialDownloadsFromDamage) {
  auto one = khub_cli(env_, "download org/relu build/" + kVariant + "/metadata.json build/" + kVariant +
                                "/__init__.py --version 1 -q");
  ASSERT_EQ(one.code, 0) << one.out;
  auto all = khub_cli(env_, "verify org/relu --version 1 --json");
  ASSERT_EQ(all.code, 0) << all.out;
  auto v = nlohmann::json::parse(all.out)["variants"][0];
  EXPECT_TRUE(v["ok"].get<bool>());
  EXPECT_FALSE(v["complete"].get<bool>());
  EXPECT_EQ(v["missing"].size(), 3u);  // _ops.py, the .so, layers/__init__.py
  auto text = khub_cli(env_, "verify org/relu --version 1");
  EXPECT_EQ(text.out, "part  " + kVariant + " (1 of 4 files cached)\n");
  auto named = khub_cli(env_, "verify org/relu --version 1 --variant " + kVariant + " --json");
  EXPECT_EQ(named.code, 1);
  EXPECT_FALSE(nlohmann::json::parse(named.out)["variants"][0]["ok"].get<bool>());
}

// verify --all checks a whole revision as download --all fetched it: every file against its blob
// and the cached tree listing, and none of the listed files missing.
TEST_F(CliTest, VerifyAllChecksEveryFileOfTheRevision) {
  auto dl = khub_cli(env_, "download org/relu --all -q");  // main: the fixture's main is v1's commit
  ASSERT_EQ(dl.code, 0) << dl.out;
  auto ok = khub_cli(env_, "verify org/relu --all --json");
  ASSERT_EQ(ok.code, 0) << ok.out;
  auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["commit"], commit_);
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_TRUE(j["tree_listing"].get<bool>());
  EXPECT_EQ(j["files"], 5);
  EXPECT_EQ(j["expected_files"], 5);
  auto text = khub_cli(env_, "verify org/relu --all --revision main");
  EXPECT_EQ(text.code, 0);
  EXPECT_EQ(text.out, "ok    org/relu " + commit_ + ": 5 of 5 files cached\n");

  // A file missing from the snapshot: incomplete, which --all does not pass.
  const fs::path snapshot = cache_.path() / "kernels--org--relu" / "snapshots" / commit_;
  fs::remove(snapshot / "build" / kVariant / "_ops.py");
  auto part = khub_cli(env_, "verify org/relu --all --json");
  EXPECT_EQ(part.code, 1);
  j = nlohmann::json::parse(part.out);
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_FALSE(j["complete"].get<bool>());
  EXPECT_EQ(j["problems"].size(), 0u) << part.out;
  EXPECT_EQ(j["missing"], nlohmann::json::array({"build/" + kVariant + "/_ops.py"}));
  // A damaged blob: named among the problems.
  fs::path blob = fs::canonical(snapshot / "build" / kVariant / "__init__.py");
  fs::permissions(blob, fs::perms::owner_write, fs::perm_options::add);
  { std::ofstream(blob, std::ios::binary | std::ios::in | std::ios::out) << "XX"; }
  auto bad = khub_cli(env_, "verify org/relu --all --json");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(nlohmann::json::parse(bad.out)["problems"].dump().find("__init__.py: git sha1 mismatch"), std::string::npos)
      << bad.out;

  // No listing (files fetched one by one, as hf_hub_download leaves them): blobs only, completeness unknown.
  TempDir other;
  const std::string other_env = "HF_ENDPOINT=" + hub_.endpoint() + " HF_HUB_CACHE=" + other.path().string();
  ASSERT_EQ(khub_cli(other_env, "download org/relu build/" + kVariant + "/__init__.py --revision v1 -q").code, 0);
  auto unlisted = khub_cli(other_env, "verify org/relu --all --revision v1");
  EXPECT_EQ(unlisted.code, 0);
  EXPECT_EQ(unlisted.out, "ok    org/relu " + commit_ + ": 1 files (no cached tree listing: completeness unknown)\n");

  // --all checks files, not variants: --variant and --signature do not go with it.
  EXPECT_EQ(khub_cli(env_, "verify org/relu --all --variant " + kVariant).code, 2);
  EXPECT_EQ(khub_cli(env_, "verify org/relu --all --signature").code, 2);
  auto uncached = khub_cli(env_, "verify org/relu --all --revision v7 --json");
  EXPECT_EQ(uncached.code, 1);
  EXPECT_EQ(nlohmann::json::parse(uncached.out)["error"]["hint"],
            "run `khub download org/relu --all --revision v7` first (`khub versions org/relu` lists the versions)");
}

// Without --version or --revision, download / verify / info take the newest version (as `info`
// always did), and a cache that lacks the repo is named as such, not listed as "no versions".
TEST_F(CliTest, DefaultsToTheNewestVersionAndNamesWhatIsMissing) {
  const std::string v2 = hub_.commit("org/relu", "v2", khub::test::sample_variant_files(kVariant, "_relu_cuda_abc1234"));
  std::ofstream(cache_.path() / "host.json")
      << R"({"os":"linux","cpu":"x86_64","torch":"2.12","cxx11_abi":true,"backend":"cuda","backend_version":"13.0","tvm_ffi":null,"macos":null})";
  const std::string host = " --host " + (cache_.path() / "host.json").string();
  auto dl = khub_cli(env_, "download org/relu -q --json" + host);
  ASSERT_EQ(dl.code, 0) << dl.out;
  EXPECT_EQ(nlohmann::json::parse(dl.out)["commit"], v2);
  auto verify = khub_cli(env_, "verify org/relu --json");
  ASSERT_EQ(verify.code, 0) << verify.out;
  EXPECT_EQ(nlohmann::json::parse(verify.out)["commit"], v2);

  TempDir empty;
  auto offline = khub_cli("HF_HUB_OFFLINE=1 " + env_, "versions org/relu --json --cache-dir " + empty.path().string());
  EXPECT_EQ(offline.code, 1);
  auto error = nlohmann::json::parse(offline.out)["error"];
  EXPECT_EQ(error["code"], "OfflineMiss");
  EXPECT_EQ(error["message"], "org/relu is not in the local cache (" + empty.path().string() +
                                  ") and Hugging Face Hub is in offline mode");
  EXPECT_EQ(khub_cli(env_, "download org/relu --cache-dir ''").code, 2);
}

TEST_F(CliTest, FilesAllLockAndErrors) {
  auto files = khub_cli(env_, "download org/relu build/" + kVariant + "/__init__.py --revision v1 --json");
  ASSERT_EQ(files.code, 0) << files.out;
  EXPECT_EQ(nlohmann::json::parse(files.out)["commit"], commit_);
  auto all = khub_cli(env_, "download org/relu --all --revision main -q");
  ASSERT_EQ(all.code, 0) << all.out;
  EXPECT_TRUE(fs::exists(cache_.path() / "kernels--org--relu" / "snapshots" / commit_ / "build" / kVariant /
                         "layers" / "__init__.py"));

  std::ofstream(cache_.path() / "pyproject.toml") << "[tool.kernels.dependencies]\n\"org/relu\" = 1\n";
  auto lock = khub_cli(env_, "lock " + cache_.path().string() + " --json");
  ASSERT_EQ(lock.code, 0) << lock.out;
  auto text = khub::test::slurp(cache_.path() / "kernels.lock");
  EXPECT_EQ(text, "[\n  {\n    \"dependency\": {\n      \"repo-id\": \"org/relu\",\n      \"version\": 1\n    },\n"
                  "    \"lock\": {\n      \"commit\": \"" + commit_ + "\"\n    }\n  }\n]");

  EXPECT_EQ(khub_cli(env_, "download org/missing --revision main -q").code, 1);
  EXPECT_EQ(khub_cli(env_, "download org/relu --version 9 -q").code, 1);
  EXPECT_EQ(khub_cli(env_, "download not-a-repo -q").code, 2);
  EXPECT_EQ(khub_cli(env_, "download org/relu --version 1 --revision main").code, 2);
  EXPECT_EQ(khub_cli(env_, "download").code, 2);
  EXPECT_EQ(khub_cli(env_ + " HF_HUB_OFFLINE=1", "download org/relu --revision v2 -q").code, 1);
}

// A kernel whose variant depends on `depends` (kernel-depends entries as JSON).
std::map<std::string, khub::test::FixtureFile> depending_kernel(const std::string& depends) {
  auto files = khub::test::sample_variant_files(kVariant, "_dep_cuda_abc1234");
  auto& meta = files["build/" + kVariant + "/metadata.json"].content;
  meta.replace(meta.find("\"python-depends\":[]"), 19, "\"python-depends\":[],\"kernel-depends\":" + depends);
  return files;
}

// `khub download` fetches the kernel-depends tree too and lists it (JSON `dependencies`, a
// Python-only one with loadable false); `khub info` shows the host variant's declared kernel-depends.
TEST_F(CliTest, DownloadFetchesTheDependencyTreeAndInfoListsIt) {
  std::ofstream(cache_.path() / "host.json")
      << R"({"os":"linux","cpu":"x86_64","torch":"2.12","cxx11_abi":true,"backend":"cuda","backend_version":"13.0","tvm_ffi":null,"macos":null})";
  const std::string host = " --host " + (cache_.path() / "host.json").string();
  const std::string py = hub_.commit("org/einops", "v1", khub::test::sample_variant_files("torch-cuda", "_einops_py"));
  hub_.commit("org/app", "v1", depending_kernel(R"([{"repo-id":"org/relu","version":1},)"
                                                R"({"repo-id":"org/einops","revision":"v1"}])"));
  auto dl = khub_cli(env_, "download org/app --version 1 --json" + host);
  ASSERT_EQ(dl.code, 0) << dl.out;
  const auto deps = nlohmann::json::parse(dl.out)["dependencies"];
  ASSERT_EQ(deps.size(), 2u) << dl.out;
  EXPECT_EQ(deps[0]["dependency"], "org/relu (version: 1)");
  EXPECT_EQ(deps[0]["commit"], commit_);
  EXPECT_EQ(deps[0]["dependent"], "org/app");
  EXPECT_TRUE(deps[0]["loadable"].get<bool>() && deps[0]["verified"].get<bool>());
  EXPECT_EQ(deps[1]["dependency"], "org/einops (revision: v1)");
  EXPECT_EQ(deps[1]["variant"], "torch-cuda");
  EXPECT_FALSE(deps[1]["loadable"].get<bool>());
  EXPECT_TRUE(fs::exists(cache_.path() / "kernels--org--einops" / "snapshots" / py / "build/torch-cuda/__init__.py"));

  auto info = khub_cli(env_, "info org/app --version 1 --json" + host);
  ASSERT_EQ(info.code, 0) << info.out;
  EXPECT_EQ(nlohmann::json::parse(info.out)["metadata"]["kernel_depends"],
            nlohmann::json::parse(R"([{"repo-id":"org/relu","version":1},{"repo-id":"org/einops","revision":"v1"}])"));

  // Only a Python-only build: the top kernel cannot be downloaded for C++, and the error says why.
  auto only_py = khub_cli(env_, "download org/einops --version 1 --json" + host);
  EXPECT_EQ(only_py.code, 1);
  EXPECT_EQ(nlohmann::json::parse(only_py.out)["error"]["message"],
            "only Python-only builds exist in org/einops (revision: " + py + "): torch-cuda");
}

TEST_F(CliTest, FileDownloadsFallBackToModelReposAndAllWorksOffline) {
  const std::string model = hub_.commit("org/weights", "main", {{"config.json", {"{}", false}},
                                                                {"sub/w.bin", {std::string(3000, 'w'), true}}},
                                        "model");
  // --repo-type's help: kernel, falling back to model, for files and --all as for the variant.
  auto file = khub_cli(env_, "download org/weights config.json --json");
  ASSERT_EQ(file.code, 0) << file.out;
  EXPECT_EQ(nlohmann::json::parse(file.out)["repo_type"], "model");
  auto all = khub_cli(env_, "download org/weights --all --json");
  ASSERT_EQ(all.code, 0) << all.out;
  EXPECT_EQ(nlohmann::json::parse(all.out)["files"], nlohmann::json::array({"config.json", "sub/w.bin"}));
  // Offline: the cached snapshot is the revision, as snapshot_download answers offline.
  auto offline = khub_cli("HF_HUB_OFFLINE=1 " + env_, "download org/weights --all --json");
  ASSERT_EQ(offline.code, 0) << offline.out;
  auto j = nlohmann::json::parse(offline.out);
  EXPECT_EQ(j["commit"], model);
  EXPECT_EQ(j["files"], nlohmann::json::array({"config.json", "sub/w.bin"}));
  auto missing = khub_cli("HF_HUB_OFFLINE=1 " + env_, "download org/nothing --all --json");
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(nlohmann::json::parse(missing.out)["error"]["code"], "OfflineMiss");
}

TEST_F(CliTest, LockFollowsKernelDependsAndTheTrustRule) {
  const std::string app =
      hub_.commit("org/app", "v1", depending_kernel(R"([{"repo-id":"org/relu","version":1},)"
                                                    R"({"repo-id":"org/relu","revision":"v1"}])"));
  std::ofstream(cache_.path() / "pyproject.toml") << "[tool.kernels.dependencies]\n\"org/app\" = 1\n";
  auto lock = khub_cli(env_, "lock " + cache_.path().string() + " --json");
  ASSERT_EQ(lock.code, 0) << lock.out;
  auto locks = nlohmann::json::parse(khub::test::slurp(cache_.path() / "kernels.lock"));
  ASSERT_EQ(locks.size(), 3u) << locks.dump();  // sorted: org/app, org/relu by version, org/relu by revision
  EXPECT_EQ(locks[0]["lock"]["commit"], app);
  EXPECT_EQ(locks[1]["dependency"], (nlohmann::json{{"repo-id", "org/relu"}, {"version", 1}}));
  EXPECT_EQ(locks[2]["dependency"], (nlohmann::json{{"repo-id", "org/relu"}, {"revision", "v1"}}));
  EXPECT_EQ(locks[2]["lock"]["commit"], commit_);  // a revision is locked as its commit
  EXPECT_EQ(nlohmann::json::parse(lock.out)["kernels"].size(), 3u);

  hub_.commit("org/x", "v1", depending_kernel(R"([{"repo-id":"org/y","version":1}])"));
  hub_.commit("org/y", "v1", depending_kernel(R"([{"repo-id":"org/x","version":1}])"));
  khub::test::TempDir cyclic;
  std::ofstream(cyclic.path() / "pyproject.toml") << "[tool.kernels.dependencies]\n\"org/x\" = 1\n";
  auto cycle = khub_cli(env_, "lock " + cyclic.path().string() + " --json");
  EXPECT_EQ(cycle.code, 1);
  EXPECT_EQ(nlohmann::json::parse(cycle.out)["error"]["message"], "Cyclic kernel dependency detected: org/x");
  EXPECT_FALSE(fs::exists(cyclic.path() / "kernels.lock"));

  hub_.commit("stray/k", "v1", khub::test::sample_variant_files(kVariant, "_k_cuda_abc1234"));
  hub_.set_trusted("stray", false);
  khub::test::TempDir untrusted;
  std::ofstream(untrusted.path() / "pyproject.toml") << "[tool.kernels.dependencies]\n\"stray/k\" = 1\n";
  auto refused = khub_cli(env_, "lock " + untrusted.path().string() + " --json");
  EXPECT_EQ(refused.code, 1);
  EXPECT_EQ(nlohmann::json::parse(refused.out)["error"]["code"], "Untrusted");
  EXPECT_FALSE(fs::exists(untrusted.path() / "kernels.lock"));
  EXPECT_EQ(khub_cli(env_, "lock " + untrusted.path().string() + " --trust-remote-code -q").code, 0);
  EXPECT_TRUE(fs::exists(untrusted.path() / "kernels.lock"));
  EXPECT_EQ(khub_cli("HF_HUB_OFFLINE=1 " + env_, "lock " + cyclic.path().string()).code, 2);
}

// `khub verify --signature`: a keyless bundle of the synthetic Sigstore instance
// (tests/signing/sigstore_fixture.py) passes only under the root that issued it and a trusted
// workflow; an unsigned variant fails; the trust flags are checked before anything is read.
// Downloads take --all: the variant is torch212-cu130, which a host without that torch does not pick.
TEST_F(CliTest, VerifySignatureChecksKeylessBundles) {
  auto files = khub::test::sample_variant_files(kVariant, "_relu_cuda_abc1234");
  const std::string meta_path = "build/" + kVariant + "/metadata.json";
  TempDir sig;
  { std::ofstream(sig.path() / "metadata.json", std::ios::binary) << files[meta_path].content; }
  const std::string sign = std::string("\"") + KHUB_PYTHON + "\" " + KHUB_SOURCE_DIR +
                           "/tests/signing/sigstore_fixture.py --sign " + (sig.path() / "root").string() + " " +
                           (sig.path() / "metadata.json").string() + " >/dev/null";
  ASSERT_EQ(std::system(sign.c_str()), 0) << sign;
  files[meta_path + ".sigstore"] = {khub::test::slurp(sig.path() / "metadata.json.sigstore")};
  hub_.commit("org/signed", "v1", files);
  auto downloaded = khub_cli(env_, "download org/signed --version 1 --all -q");
  ASSERT_EQ(downloaded.code, 0) << downloaded.out;
  const std::string root = " --sigstore-root " + (sig.path() / "root" / "trusted_root.json").string();

  auto ok = khub_cli(env_, "verify org/signed --version 1 --signature" + root);
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_EQ(ok.out, "ok    " + kVariant + " (signature verified)\n");
  auto public_good = khub_cli(env_, "verify org/signed --version 1 --signature --json");
  EXPECT_EQ(public_good.code, 1);
  const auto v = nlohmann::json::parse(public_good.out)["variants"][0];
  EXPECT_EQ(v["signature"], "SignatureVerificationFailure");
  EXPECT_NE(v["problems"][0].get<std::string>().find("Fulcio"), std::string::npos) << v.dump();
  const std::string other = " --trusted-workflow https://github.com/org/k/.github/workflows/build.yaml@refs/heads/main";
  EXPECT_EQ(khub_cli(env_, "verify org/signed --version 1 --signature" + root + other).code, 1);

  ASSERT_EQ(khub_cli(env_, "download org/relu --version 1 --all -q").code, 0);
  auto unsigned_variant = khub_cli(env_, "verify org/relu --version 1 --signature --json");
  EXPECT_EQ(unsigned_variant.code, 1);
  EXPECT_EQ(nlohmann::json::parse(unsigned_variant.out)["variants"][0]["signature"], "SignatureBundleMissing");
  EXPECT_EQ(khub_cli(env_, "verify org/relu --version 1 --signature").code, 1);
  EXPECT_EQ(khub_cli(env_, "verify org/relu --version 1").code, 0);  // without --signature: hashes only

  EXPECT_EQ(khub_cli(env_, "verify org/signed --version 1" + root).code, 2);  // needs --signature
  EXPECT_EQ(khub_cli(env_, "verify org/signed --version 1 --signature --trusted-workflow https://example.com/x").code, 2);
  EXPECT_EQ(khub_cli(env_, "verify org/signed --version 1 --signature --sigstore-root /nonexistent.json").code, 2);
  EXPECT_EQ(khub_cli(env_, "verify org/signed --version 1 --signature --trusted-key " + meta_path).code, 2);
}

}  // namespace
