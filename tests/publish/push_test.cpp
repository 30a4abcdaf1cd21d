// khub push end to end against the local Hub: kernel-builder upload's publish flow (docs/protocol.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "khub/base/hash.h"
#include "khub/protocol/metadata.h"
#include "push_fixture.h"

namespace khub::publish {
namespace {

using khub::testing::minimal_metadata;
using khub::testing::slurp;

const std::string kA = "torch212-cxx11-cu130-x86_64-linux";
const std::string kB = "torch212-cxx11-cu126-x86_64-linux";

class Push : public khub::testing::PushFixture {
 protected:
  void make_build(std::size_t so_size = 200 * 1024) {
    for (const auto& v : {kA, kB}) {
      add_variant(v);
      write(v + "/_ops.py", "import torch\nops = torch.ops._relu_cuda_abc1234\n");
      write(v + "/layers/__init__.py", "");
      std::string blob(so_size, '\0');
      for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>((i * 131 + static_cast<unsigned char>(v[18])) & 0xff);
      copy_in(KHUB_FIXTURE_NS_GOOD, v + "/_relu_cuda_abc1234.abi3.so");
      write(v + "/data.bin", blob);
    }
    write("CARD.md", "# relu\n");
    std::filesystem::create_directories(kernel() / "benchmarks");
    std::ofstream(kernel() / "benchmarks" / "benchmark.py") << "print('bench')\n";
    std::ofstream(kernel() / "benchmarks" / "helper.py") << "not uploaded\n";
    hash_all();
  }
};

TEST_F(Push, FirstPushCreatesRepoBranchAndFiles) {
  make_build();
  transport_.hide_xet = true;  // the LFS flow, multipart included (push_xet_test.cpp has Xet's)
  auto r = push(options());
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->status, "uploaded");
  EXPECT_EQ(r->repo, "khub-test/relu");
  EXPECT_EQ(r->branch, "v1");
  EXPECT_TRUE(r->branch_created);
  EXPECT_EQ(r->variants, (std::vector<std::string>{kB, kA}));
  EXPECT_EQ(r->files_deleted, 0u);
  EXPECT_EQ(r->commits, 2u);  // README on main, build on v1
  auto v1 = files_on("v1");
  EXPECT_TRUE(v1.contains("build/" + kA + "/metadata.json"));
  EXPECT_TRUE(v1.contains("build/" + kB + "/layers/__init__.py"));
  EXPECT_TRUE(v1.contains("benchmarks/benchmark.py"));
  EXPECT_FALSE(v1.contains("benchmarks/helper.py"));
  EXPECT_EQ(r->files_uploaded, 1u + 2 * 6u + 1u);  // README + 6 per variant + benchmark
  auto data = hash_file(build() / kA / "data.bin", HashAlgorithm::Sha256);
  ASSERT_TRUE(data);
  EXPECT_EQ(v1.at("build/" + kA + "/data.bin"), to_hex(*data));
  EXPECT_EQ(files_on("main").count("README.md"), 1u);
  EXPECT_EQ(r->commit, server_->store().resolve_revision(
                           *server_->store().find_repo({localhub::RepoType::Kernel, "khub-test", "relu"}), "v1")
                           .value());
  EXPECT_GE(r->bytes_uploaded, 2u * 200 * 1024);
  EXPECT_EQ(summaries("v1").front(), "Uploaded using `khub`.");
  // data.bin (200 KiB) goes multipart in 64 KiB parts: 4 PUTs per variant; nothing else is LFS.
  EXPECT_EQ(transport_.puts, 8);
  EXPECT_EQ(transport_.put_bytes, 2u * 200 * 1024);
}

TEST_F(Push, RepushOfUnchangedBuildSendsNothing) {
  make_build();
  ASSERT_TRUE(push(options()));
  transport_.put_bytes = 0;
  auto again = push(options());
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_EQ(again->status, "no_changes");
  EXPECT_FALSE(again->branch_created);
  EXPECT_EQ(again->bytes_uploaded, 0u);
  EXPECT_EQ(again->files_uploaded, 0u);
  EXPECT_EQ(again->commits, 0u);
  EXPECT_EQ(transport_.put_bytes, 0u);
  EXPECT_FALSE(again->commit.empty());
}

TEST_F(Push, DeletesStaleFilesOnlyInPushedVariants) {
  make_build();
  ASSERT_TRUE(push(options()));
  // Rebuild only variant A without layers/, push A alone: B keeps its files.
  std::filesystem::remove_all(build() / kA / "layers");
  std::filesystem::rename(build() / kB, root_ / "B-aside");
  hash_all();
  auto r = push(options());
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->files_deleted, 1u);
  auto v1 = files_on("v1");
  EXPECT_FALSE(v1.contains("build/" + kA + "/layers/__init__.py"));
  EXPECT_TRUE(v1.contains("build/" + kB + "/layers/__init__.py"));
  EXPECT_EQ(r->files_uploaded, 1u);  // A's metadata.json (new digest)
}

TEST_F(Push, NewBranchPurgesInheritedBuild) {
  make_build();
  auto o = options();
  o.branch = "main";
  ASSERT_TRUE(push(o));
  EXPECT_TRUE(files_on("main").contains("build/" + kB + "/data.bin"));
  // Version 2 with variant A only: v2 is created from main and must not keep main's build/ files.
  std::filesystem::rename(build() / kB, root_ / "B-aside");
  write(kA + "/metadata.json", minimal_metadata("_relu_cuda_abc1234", 2));
  hash_all();
  auto r = push(options());
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->branch, "v2");
  EXPECT_TRUE(r->branch_created);
  auto v2 = files_on("v2");
  EXPECT_FALSE(v2.contains("build/" + kB + "/data.bin"));
  EXPECT_TRUE(v2.contains("build/" + kA + "/data.bin"));
  EXPECT_TRUE(files_on("main").contains("build/" + kB + "/data.bin"));
}

TEST_F(Push, BatchesOfAtMostNOperations) {
  make_build(1024);
  auto o = options();
  o.max_operations_per_commit = 5;
  auto r = push(o);
  ASSERT_TRUE(r) << r.error().describe();
  // v1: 13 adds → batches of 5, 5, 3.
  auto s = summaries("v1");
  ASSERT_GE(s.size(), 3u);
  EXPECT_EQ(s[0], "Uploaded using `khub` (batch 3/3).");
  EXPECT_EQ(s[2], "Uploaded using `khub` (batch 1/3).");
  EXPECT_EQ(files_on("v1").size(), 1u + 13u);  // + .gitattributes
}

TEST_F(Push, PullRequestOnExistingBranch) {
  make_build();
  auto o = options();
  o.create_pr = true;
  auto missing = push(o);
  ASSERT_FALSE(missing);
  o.create_pr = false;
  ASSERT_TRUE(push(o));
  write(kA + "/extra.py", "x = 1\n");
  hash_all();
  const auto before = files_on("v1");
  o.create_pr = true;
  auto r = push(o);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->status, "pull_request_created");
  ASSERT_EQ(r->pull_requests.size(), 1u);
  EXPECT_EQ(r->pull_requests[0].branch, "v1");
  EXPECT_NE(r->pull_requests[0].url.find("/discussions/"), std::string::npos);
  EXPECT_EQ(files_on("v1"), before);
  auto pr = r->pull_requests[0].url.substr(r->pull_requests[0].url.rfind('/') + 1);
  EXPECT_TRUE(files_on("refs/pr/" + pr).contains("build/" + kA + "/extra.py"));

  // A branch that does not exist yet is created first, as kernel-builder does, and the PR targets it.
  o.branch = "next";
  auto next = push(o);
  ASSERT_TRUE(next) << next.error().describe();
  EXPECT_EQ(next->status, "pull_request_created");
  EXPECT_TRUE(next->branch_created);
  ASSERT_EQ(next->pull_requests.size(), 1u);
  EXPECT_EQ(next->pull_requests[0].branch, "next");
}

// `khub push build/` as kernel-builder takes the folder given: its benchmarks/ and its build.toml
// (none here, so v<version>). The parent's build.toml only supplies a repo id --repo leaves out.
TEST_F(Push, BuildFolderGivenTakesBranchAndBenchmarksFromIt) {
  make_build();
  std::ofstream(kernel() / "build.toml")
      << "[general]\nname = \"relu\"\nversion = 1\nedition = 5\nlicense = \"Apache-2.0\"\nbackends = [\"cuda\"]\n"
         "[general.hub]\nrepo-id = \"khub-test/from-toml\"\nbranch = \"custom\"\n[torch]\nsrc = []\n";
  std::filesystem::create_directories(build() / "benchmarks");
  std::ofstream(build() / "benchmarks" / "benchmark_b.py") << "print('b')\n";
  auto o = options();
  o.repo_id.clear();
  auto r = push(o, build());
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->repo, "khub-test/from-toml");
  EXPECT_EQ(r->branch, "v1");
  auto v1 = files_on("v1", "khub-test/from-toml");
  EXPECT_TRUE(v1.contains("benchmarks/benchmark_b.py"));
  EXPECT_FALSE(v1.contains("benchmarks/benchmark.py"));
}

TEST_F(Push, ChecksRunBeforeAnyRequest) {
  make_build();
  write(kA + "/late.py", "changed after hashing\n");
  auto r = push(options());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().notes.at(0).find("Unknown file: late.py"), std::string::npos);
  EXPECT_EQ(transport_.requests, 0);
  auto o = options();
  o.token.clear();
  hash_all();
  auto no_token = push(o);
  ASSERT_FALSE(no_token);
  EXPECT_EQ(no_token.error().code, ErrorCode::Unauthorized);
  EXPECT_EQ(transport_.requests, 0);
  o = options();
  o.version = 7;
  auto wrong = push(o);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().message, "--version 7 does not match metadata.json version 1");
}

TEST_F(Push, AbiPolicyWarnAndOff) {
  make_build(1024);
  copy_in(KHUB_FIXTURE_ABI_DIRTY, kA + "/lib/helper.so");  // GLIBC_2.34, non-abi3, libcrypto
  hash_all();
  auto strict = push(options());
  ASSERT_FALSE(strict);
  EXPECT_EQ(strict.error().code, ErrorCode::AbiViolation);
  EXPECT_EQ(transport_.requests, 0);
  std::vector<std::string> lines;
  auto o = options();
  o.abi_policy = PushOptions::AbiPolicy::Warn;
  o.status = [&](std::string_view l) { lines.emplace_back(l); };
  auto warned = push(o);
  ASSERT_TRUE(warned) << warned.error().describe();
  EXPECT_NE(std::find_if(lines.begin(), lines.end(),
                         [](const auto& l) { return l.find("pthread_create@GLIBC_2.34") != std::string::npos; }),
            lines.end());
  o.abi_policy = PushOptions::AbiPolicy::Off;
  EXPECT_TRUE(push(o));
}

TEST_F(Push, BadTokenIsUnauthorized) {
  make_build(1024);
  auto o = options();
  o.token = "hf_wrong";
  auto r = push(o);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().code == ErrorCode::Unauthorized || r.error().code == ErrorCode::Forbidden)
      << r.error().describe();
}

TEST_F(Push, DryRunWritesNothing) {
  make_build(1024);
  auto o = options();
  o.dry_run = true;
  auto r = push(o);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->status, "dry_run");
  EXPECT_EQ(r->files_uploaded, 14u);
  for (const auto& line : transport_.log) EXPECT_TRUE(line.starts_with("GET ")) << line;
  EXPECT_FALSE(server_->store().find_repo({localhub::RepoType::Kernel, "khub-test", "relu"}));
}

TEST_F(Push, BareNameGoesToTheTokensUser) {
  make_build(1024);
  auto o = options();
  o.repo_id = "relu";
  auto r = push(o);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->repo, "tester/relu");
  EXPECT_TRUE(server_->store().find_repo({localhub::RepoType::Kernel, "tester", "relu"}));
  EXPECT_FALSE(server_->store().find_repo({localhub::RepoType::Kernel, "khub-test", "relu"}));
  EXPECT_EQ(transport_.log.front(), "GET " + server_->url() + "/api/whoami-v2");
}

TEST_F(Push, BareNameWithoutTokenSaysWhatToPass) {
  make_build(1024);
  auto o = options();
  o.repo_id = "relu";
  o.token.clear();
  o.dry_run = true;
  auto r = push(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(r.error().describe().find("<namespace>/relu"), std::string::npos) << r.error().describe();
  EXPECT_EQ(transport_.requests, 0);
}

TEST_F(Push, MalformedRepoIdsAreRefused) {
  make_build(1024);
  for (const char* id : {"/relu", "khub-test/", "a/b/c"}) {
    auto o = options();
    o.repo_id = id;
    auto r = push(o);
    ASSERT_FALSE(r) << id;
    EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument) << id;
  }
  EXPECT_EQ(transport_.requests, 0);
}

// build.toml problems are reported as they are, before any request: its parse error (file and line)
// and a general.hub.branch the Hub would refuse.
TEST_F(Push, BuildTomlProblemsAreNamed) {
  make_build(1024);
  auto o = options();
  o.repo_id.clear();
  std::ofstream(kernel() / "build.toml") << "[general\nname = \"relu\"\n";
  auto broken = push(o);
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().describe().find("build.toml"), std::string::npos) << broken.error().describe();
  EXPECT_NE(broken.error().describe().find("line"), std::string::npos) << broken.error().describe();
  std::ofstream(kernel() / "build.toml")
      << "[general]\nname = \"relu\"\nversion = 1\nedition = 5\nlicense = \"Apache-2.0\"\nbackends = [\"cuda\"]\n"
         "[general.hub]\nrepo-id = \"khub-test/relu\"\nbranch = \"bad..b\"\n[torch]\nsrc = []\n";
  auto branch = push(o);
  ASSERT_FALSE(branch);
  EXPECT_EQ(branch.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(branch.error().message.find("branch 'bad..b' (general.hub.branch of build.toml)"), std::string::npos)
      << branch.error().message;
  EXPECT_EQ(transport_.requests, 0);
}

// kernel-depends from build.toml go into every variant's metadata.json before the upload: [general]
// for all, [general.cuda] added for the cuda ones; a re-push changes nothing; a dry run only says
// what it would write; a signed variant whose list would change is refused before any request.
TEST_F(Push, WritesKernelDependsFromBuildToml) {
  const std::string cpu = "torch212-cxx11-cpu-x86_64-linux";
  make_build(1024);
  add_variant(cpu, R"({"name":"relu","id":"_relu_cpu_abc1234","version":1,"license":"Apache-2.0",)"
                   R"("python-depends":[],"kernel-depends":[],"backend":{"type":"cpu"}})");
  copy_in(KHUB_FIXTURE_NS_GOOD, cpu + "/_relu_cpu_abc1234.abi3.so");
  hash_all();
  auto toml = [&](const std::string& cuda_dep) {
    std::ofstream(kernel() / "build.toml")
        << "[general]\nname = \"relu\"\nversion = 1\nedition = 5\nlicense = \"Apache-2.0\"\nbackends = [\"cpu\", "
           "\"cuda\"]\nkernel-depends = [{ repo-id = \"org/a\", version = 2 }]\n[general.cuda]\nkernel-depends = [{ "
           "repo-id = \"" + cuda_dep + "\", revision = \"main\" }]\n[torch]\nsrc = []\n";
  };
  toml("org/b");
  std::vector<std::string> lines;
  auto o = options();
  o.abi_policy = PushOptions::AbiPolicy::Off;
  o.status = [&](std::string_view l) { lines.emplace_back(l); };
  auto r = push(o);
  ASSERT_TRUE(r) << r.error().describe();
  const protocol::KernelDependency a{"org/a", 2, std::nullopt}, b{"org/b", std::nullopt, "main"};
  for (const auto& [variant, wanted] : std::vector<std::pair<std::string, std::vector<protocol::KernelDependency>>>{
           {kA, {a, b}}, {kB, {a, b}}, {cpu, {a}}}) {
    auto m = protocol::read_metadata(build() / variant / "metadata.json");
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(m->kernel_depends, wanted) << variant;
    auto local = hash_file(build() / variant / "metadata.json", HashAlgorithm::Sha256);
    ASSERT_TRUE(local);
    EXPECT_EQ(files_on("v1").at("build/" + variant + "/metadata.json"), to_hex(*local)) << variant;
  }
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "Wrote kernel-depends from build.toml into " + cpu + "/metadata.json (1 entries, was 0)"),
            lines.end());

  lines.clear();
  auto again = push(o);
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_EQ(again->status, "no_changes");
  for (const auto& l : lines) EXPECT_EQ(l.find("kernel-depends"), std::string::npos) << l;

  toml("org/c");
  const std::string before = slurp(build() / kA / "metadata.json");
  auto dry = o;
  dry.dry_run = true;
  lines.clear();
  ASSERT_TRUE(push(dry));
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "Would write kernel-depends from build.toml into " + kA + "/metadata.json (2 entries, was 2)"),
            lines.end());
  EXPECT_EQ(slurp(build() / kA / "metadata.json"), before);

  write(kA + "/metadata.json.sigstore", "{}");
  const int requests = transport_.requests;
  auto signed_variant = push(o);
  ASSERT_FALSE(signed_variant);
  EXPECT_EQ(signed_variant.error().code, ErrorCode::InvalidArgument);
  EXPECT_EQ(signed_variant.error().message,
            kA + "/metadata.json: its kernel-depends differ from build.toml, and metadata.json.sigstore signs the "
                 "file as it is");
  EXPECT_EQ(slurp(build() / kA / "metadata.json"), before);
  EXPECT_EQ(slurp(build() / kB / "metadata.json").find("org/c"), std::string::npos);  // none written
  EXPECT_EQ(transport_.requests, requests);
}

// The commit to the new version branch fails (a 500; commits are not retried): the branch this push
// made is deleted again, so no loader finds a v1 without its build. The README on main stays.
class PushFailing : public Push {
 protected:
  localhub::ServerConfig config() const override {
    auto c = Push::config();
    c.faults.push_back(localhub::parse_fault("POST /api/kernels/khub-test/relu/commit/v1=500,count=100").value());
    return c;
  }
};

TEST_F(PushFailing, ANewBranchIsDeletedWhenItsCommitFails) {
  make_build(1024);
  auto r = push(options());
  ASSERT_FALSE(r);
  const std::string described = r.error().describe();
  EXPECT_NE(described.find("the new branch `v1` was deleted again"), std::string::npos) << described;
  auto repo = server_->store().find_repo({localhub::RepoType::Kernel, "khub-test", "relu"});
  ASSERT_TRUE(repo);
  EXPECT_FALSE(server_->store().resolve_revision(*repo, "v1"));
  EXPECT_TRUE(server_->store().resolve_revision(*repo, "main"));
}

}  // namespace
}  // namespace khub::publish

namespace khub::publish {
namespace {

// The local Hub's real answers, with one route's JSON body replaced, as a hostile or broken Hub
// would answer.
class RewritingTransport : public http::Transport {
 public:
  RewritingTransport(std::string path_end, std::string body) : path_end_(std::move(path_end)), body_(std::move(body)) {}
  Expected<http::Response> perform(const http::Request& r) override {
    KHUB_TRY(auto res, inner_->perform(r));
    const std::string path = r.url.substr(0, r.url.find('?'));
    if (path.ends_with(path_end_) && res.status / 100 == 2) res.body = body_;
    return res;
  }

 private:
  std::string path_end_, body_;
  std::unique_ptr<http::Transport> inner_ = http::make_curl_transport();
};

// A malformed answer fails the push with a Protocol error instead of reading as "nothing": refs
// without a branch list (push had created the branch), preupload entries without their mode
// (every file had gone inline) and a commit without its id (push had reported success).
TEST_F(Push, MalformedHubAnswersFailThePush) {
  add_variant("torch-cuda");
  hash_all();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/refs", R"({"branches":5,"tags":[]})"},
      {"/preupload/v1", R"({"files":[{"path":5,"uploadMode":"lfs"},{"uploadMode":"regular"}]})"},
      {"/commit/v1", R"({"commitOid":5,"commitUrl":"x"})"},
  };
  for (const auto& [route, body] : cases) {
    RewritingTransport transport(route, body);
    auto tree = discover_build(kernel());
    ASSERT_TRUE(tree);
    auto r = push_build(*tree, options(), transport);
    ASSERT_FALSE(r) << route << " answered " << body << ": the push reported success";
    EXPECT_EQ(r.error().code, ErrorCode::Protocol) << route << ": " << r.error().describe();
  }
}


// A hostile LFS batch answer: a multipart part number beyond 2^64 is a Protocol error that names it
// (it was read with atoi, undefined behaviour that put the part URLs in a wrong order), before any
// byte is sent; part numbers with leading zeros (as the local hub writes them) still work.
class LfsPartRewriting : public http::Transport {
 public:
  explicit LfsPartRewriting(std::string huge_key) : huge_key_(std::move(huge_key)) { inner_.hide_xet = true; }
  Expected<http::Response> perform(const http::Request& r) override {
    KHUB_TRY(auto res, inner_.perform(r));
    if (!r.url.ends_with("/info/lfs/objects/batch") || res.status != 200 || huge_key_.empty()) return res;
    auto j = nlohmann::json::parse(res.body);
    for (auto& o : j["objects"]) {
      if (!o.contains("actions")) continue;
      auto& header = o["actions"]["upload"]["header"];
      if (!header.contains("00002")) continue;
      header[huge_key_] = header["00002"];
      header.erase("00002");
    }
    res.body = j.dump();
    return res;
  }
  khub::testing::CountingTransport inner_;

 private:
  std::string huge_key_;
};

// A pull request number past int (read with atoi before: undefined behaviour, and the push's later
// batches would have gone to refs/pr/<whatever it gave>) fails the push with a Protocol error.
TEST_F(Push, APullRequestNumberBeyondIntIsAProtocolError) {
  make_build();
  ASSERT_TRUE(push(options()));
  write(kA + "/extra.py", "x = 1\n");
  hash_all();
  RewritingTransport hostile("/commit/v1", R"({"commitOid":")" + std::string(40, 'a') +
                                               R"(","commitUrl":"x","pullRequestUrl":"http://h/kernels/khub-test/relu/discussions/99999999999"})");
  auto tree = discover_build(kernel());
  ASSERT_TRUE(tree);
  auto o = options();
  o.create_pr = true;
  auto r = push_build(*tree, o, hostile);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::Protocol) << r.error().describe();
  EXPECT_NE(r.error().message.find("discussions/99999999999 names no pull request number"), std::string::npos)
      << r.error().message;
}

TEST_F(Push, LfsPartNumbersBeyond64BitsAreAProtocolError) {
  make_build(200 * 1024);  // 64 KiB parts: four per data.bin
  LfsPartRewriting hostile("18446744073709551616");
  auto tree = discover_build(kernel());
  ASSERT_TRUE(tree);
  auto r = push_build(*tree, options(), hostile);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::Protocol) << r.error().describe();
  EXPECT_NE(r.error().message.find("part number 18446744073709551616 is beyond 2^64"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(hostile.inner_.count("/lfs-upload/"), 0);

  LfsPartRewriting plain("");
  auto ok = push_build(*tree, options(), plain);
  ASSERT_TRUE(ok) << ok.error().describe();
  EXPECT_GT(plain.inner_.count("/lfs-upload/"), 4);
}

}  // namespace
}  // namespace khub::publish
