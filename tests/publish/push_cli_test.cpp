// `khub push` as a process against the in-process local Hub: --json keys, exit codes, stderr lines.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "push_fixture.h"

namespace khub::publish {
namespace {

using PushCli = khub::testing::PushFixture;

TEST_F(PushCli, JsonResultAndRepush) {
  add_variant("torch-cuda");
  hash_all();
  auto first = run_khub("push " + kernel().string() + " --repo khub-test/relu --json");
  ASSERT_EQ(first.code, 0) << khub::testing::slurp(root_ / "stderr.txt");
  auto j = nlohmann::json::parse(first.out);
  for (const char* key : {"repo", "branch", "commit", "variants", "files_uploaded", "files_deleted", "bytes_uploaded",
                          "bytes_deduplicated", "transfer"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["repo"], "khub-test/relu");
  EXPECT_EQ(j["branch"], "v1");
  EXPECT_EQ(j["variants"], nlohmann::json::array({"torch-cuda"}));
  EXPECT_EQ(j["files_uploaded"], 2);
  EXPECT_EQ(j["commit"].get<std::string>().size(), 40u);
  auto stderr_text = khub::testing::slurp(root_ / "stderr.txt");
  EXPECT_NE(stderr_text.find("Found 1 build variant(s) in "), std::string::npos);
  EXPECT_NE(stderr_text.find("Using branch `v1` (new)"), std::string::npos);

  auto again = run_khub("push " + build().string() + " --repo khub-test/relu --output-json " + (root_ / "out.json").string());
  ASSERT_EQ(again.code, 0);
  EXPECT_EQ(again.out, "Kernel unchanged: " + server_->url() + "/kernels/khub-test/relu/tree/v1\n");
  EXPECT_NE(khub::testing::slurp(root_ / "stderr.txt").find("No changes to upload."), std::string::npos);
  auto out = nlohmann::json::parse(khub::testing::slurp(root_ / "out.json"));
  EXPECT_EQ(out["status"], "no_changes");
  EXPECT_EQ(out["repo_id"], "khub-test/relu");
  EXPECT_TRUE(out["url"].is_null());  // as kernel-builder: a url only for an upload
}

TEST_F(PushCli, ExitCodes) {
  add_variant("torch-cuda");
  auto unhashed = run_khub("push " + kernel().string() + " --repo khub-test/relu");
  EXPECT_EQ(unhashed.code, 1);
  EXPECT_NE(khub::testing::slurp(root_ / "stderr.txt").find("error: build check failed"), std::string::npos);
  hash_all();
  EXPECT_EQ(run_khub("push " + kernel().string() + " --repo khub-test/relu", "hf_bad").code, 4);
  EXPECT_EQ(run_khub("push " + kernel().string()).code, 2);  // no --repo and no build.toml
  EXPECT_EQ(run_khub("push " + kernel().string() + " --repo bad..name").code, 2);
  // Arguments that would fail half-way are refused before anything exists on the Hub.
  const std::string push = "push " + kernel().string() + " --repo khub-test/relu";
  for (const std::string& bad : {"push " + kernel().string() + " --repo ../relu", push + " --branch ../x",
                                 push + " --branch ''",
                                 push + " --output-json " + (root_ / "no-such-folder" / "o.json").string(),
                                 "push " + kernel().string() + " --repo khub-test/" + std::string(97, 'r')}) {
    EXPECT_EQ(run_khub(bad).code, 2) << bad;
  }
  EXPECT_EQ(run_khub("push " + kernel().string() + " --repo khub-test/relu --json --branch ../x").out,
            "{\n  \"error\": {\n    \"code\": \"InvalidArgument\",\n    \"message\": \"--branch '../x' is not a valid "
            "branch name\",\n    \"hint\": \"use letters, digits, '-', '_', '.' and '/', e.g. v1 or release/2026-12\"\n  }\n}\n");
  setenv("HF_HUB_OFFLINE", "1", 1);
  EXPECT_EQ(run_khub(push).code, 2);
  unsetenv("HF_HUB_OFFLINE");
  EXPECT_FALSE(server_->store().find_repo({localhub::RepoType::Kernel, "khub-test", "relu"}));
  // A bare name is the token's user's repo; the text output says what was sent and deduplicated.
  const auto bare = run_khub("push " + kernel().string() + " --repo relu");
  EXPECT_EQ(bare.code, 0);
  EXPECT_NE(bare.out.find("\nSent "), std::string::npos) << bare.out;
  EXPECT_NE(bare.out.find(" of file content (0 bytes deduplicated"), std::string::npos) << bare.out;
  EXPECT_TRUE(server_->store().find_repo({localhub::RepoType::Kernel, "tester", "relu"}));
}

// The commands that read a build agree: a missing path and a malformed metadata.json are bad input
// (exit 2), and a missing path is worded the same way in each.
TEST_F(PushCli, BuildReadersAgreeOnBadInput) {
  const std::string missing = (root_ / "no-such-build").string();
  std::vector<std::string> readers = {"check", "hash", "push"};
#if KHUB_HAVE_ARCHIVE
  readers.push_back("pack");
#endif
  auto args = [&](const std::string& cmd, const std::string& dir) {
    if (cmd == "push") return cmd + " " + dir + " --repo khub-test/relu";
    if (cmd == "pack") return cmd + " " + dir + " -o " + (root_ / "b.tar.zst").string();
    return cmd + " " + dir;
  };
  for (const auto& cmd : readers) {
    EXPECT_EQ(run_khub(args(cmd, missing)).code, 2) << cmd;
    EXPECT_NE(khub::testing::slurp(root_ / "stderr.txt").find(missing + ": no such file or directory"),
              std::string::npos)
        << cmd << ": " << khub::testing::slurp(root_ / "stderr.txt");
  }
  add_variant("torch-cuda");
  { std::ofstream(build() / "torch-cuda" / "metadata.json") << "{\"name\": "; }
  for (const auto& cmd : readers) {
    if (cmd == "check") continue;  // check reports it as a finding (exit 1), as kernel-builder's check
    EXPECT_EQ(run_khub(args(cmd, build().string())).code, 2)
        << cmd << ": " << khub::testing::slurp(root_ / "stderr.txt");
  }
}

#if KHUB_HAVE_ARCHIVE
// Two CI jobs each pack one variant; one push publishes both.
TEST_F(PushCli, PushesSeveralBundles) {
  const std::string a = "torch212-cxx11-cu130-x86_64-linux", b = "torch212-cxx11-cu126-x86_64-linux";
  for (const auto& v : {a, b}) {
    add_variant(v);
    copy_in(KHUB_FIXTURE_NS_GOOD, v + "/_relu_cuda_abc1234.abi3.so");
    hash_all();
    auto packed = run_khub("pack " + (build() / v).string() + " -o " + (root_ / (v + ".tar.zst")).string());
    ASSERT_EQ(packed.code, 0) << khub::testing::slurp(root_ / "stderr.txt");
    std::filesystem::remove_all(build() / v);
  }
  // A push a kill ended left its unpacked bundles behind; the next push removes them, and only
  // those whose process is gone.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ::waitpid(gone, nullptr, 0);
  const auto tmp = std::filesystem::temp_directory_path();
  const auto stale = tmp / ("khub-push-" + std::to_string(gone) + "-zzzzzz");
  const auto live = tmp / ("khub-push-" + std::to_string(::getpid()) + "-zzzzzz");
  for (const auto& d : {stale, live}) {
    std::filesystem::create_directories(d / "kernel");
    std::ofstream(d / "kernel" / "big.so") << "left behind";
  }
  auto pushed = run_khub("push " + (root_ / (a + ".tar.zst")).string() + " " + (root_ / (b + ".tar.zst")).string() +
                         " --repo khub-test/relu --json");
  ASSERT_EQ(pushed.code, 0) << khub::testing::slurp(root_ / "stderr.txt");
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(live));
  std::filesystem::remove_all(live);
  auto j = nlohmann::json::parse(pushed.out);
  EXPECT_EQ(j["variants"], nlohmann::json::array({b, a}));
  EXPECT_EQ(j["files_uploaded"], 6);
  auto v1 = files_on("v1");
  EXPECT_TRUE(v1.contains("build/" + a + "/_relu_cuda_abc1234.abi3.so"));
  EXPECT_TRUE(v1.contains("build/" + b + "/metadata.json"));
  auto missing = run_khub("push " + (root_ / "nope.tar.zst").string() + " --repo khub-test/relu");
  EXPECT_EQ(missing.code, 2);
  // Bad metadata fails at pack time, in the CI job that built it, not later at the push.
  add_variant(a);
  write(a + "/metadata.json", "{not json");
  EXPECT_EQ(run_khub("pack " + (build() / a).string() + " -o " + (root_ / "bad.tar.zst").string()).code, 2);
  EXPECT_FALSE(std::filesystem::exists(root_ / "bad.tar.zst"));
  // So does what push would refuse (a variant name that does not parse, a stale digest), and a
  // bundle name that is no .tar.zst.
  std::filesystem::remove_all(build() / a);
  const std::string typo = "torch212-cxx11-cpuu-x86_64-linux";
  add_variant(typo);
  hash_all();
  EXPECT_EQ(run_khub("pack " + (build() / typo).string() + " -o " + (root_ / "typo.tar.zst").string()).code, 2);
  EXPECT_FALSE(std::filesystem::exists(root_ / "typo.tar.zst"));
  std::filesystem::remove_all(build() / typo);
  add_variant(a);
  copy_in(KHUB_FIXTURE_NS_GOOD, a + "/_relu_cuda_abc1234.abi3.so");
  hash_all();
  EXPECT_EQ(run_khub("pack " + (build() / a).string() + " -o " + (root_ / "a.zip").string()).code, 2);
  write(a + "/__init__.py", "# changed after hashing\n");
  EXPECT_EQ(run_khub("pack " + (build() / a).string() + " -o " + (root_ / "stale.tar.zst").string()).code, 2);
  EXPECT_NE(khub::testing::slurp(root_ / "stderr.txt").find("khub hash"), std::string::npos);
}

// A bundle whose module fails push's ELF checks (pack leaves those to the push): the error names the
// bundle and never the temporary folder it was unpacked into, which is gone when the user reads it.
TEST_F(PushCli, AFailedBundlePushNamesTheBundleNotItsScratchFolder) {
  const std::string a = "torch212-cxx11-cu130-x86_64-linux";
  add_variant(a);
  copy_in(KHUB_FIXTURE_ABI_DIRTY, a + "/_relu_cuda_abc1234.abi3.so");
  hash_all();
  const auto bundle = root_ / "dirty.tar.zst";
  ASSERT_EQ(run_khub("pack " + (build() / a).string() + " -o " + bundle.string()).code, 0)
      << khub::testing::slurp(root_ / "stderr.txt");
  auto pushed = run_khub("push " + bundle.string() + " --repo khub-test/relu");
  EXPECT_NE(pushed.code, 0);
  const std::string err = khub::testing::slurp(root_ / "stderr.txt");
  const auto error_at = err.find("error:");
  ASSERT_NE(error_at, std::string::npos) << err;
  EXPECT_EQ(err.find("khub-push-", error_at), std::string::npos) << "the error points at a removed folder:\n" << err;
  EXPECT_NE(err.find("packed from", error_at), std::string::npos) << err;
}
#endif

}  // namespace
}  // namespace khub::publish
