// fetch_kernel against a loopback Hub with a fixed host: the get_kernel steps and every way they fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "fixture_hub.h"
#include "khub/base/fs.h"
#include "khub/hub/download.h"
#include "khub/hub/kernel_fetch.h"
#include "test_util.h"

namespace {
using namespace khub;
using namespace khub::hub;
using test::FixtureFile;
namespace fs = std::filesystem;

const std::string kVariant = "torch212-cxx11-cu130-x86_64-linux";
const std::string kId = "_relu_cuda_abc1234";

variants::HostInfo h200() {
  variants::HostInfo h;
  h.torch = variants::Version{2, 12};
  h.cxx11_abi = true;
  h.backend = variants::Backend{variants::BackendKind::Cuda, variants::Version{13, 0}};
  h.cuda_capability = variants::Version{9, 0};
  return h;
}

class FetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    v1_ = hub_.commit("org/relu", "v1", test::sample_variant_files(kVariant, kId));
    v2_ = hub_.commit("org/relu", "v2", test::sample_variant_files(kVariant, kId + "2"));
    hub_.set_trusted("org", true);
  }
  KernelRequest request(std::string repo, int version) {
    KernelRequest r;
    r.repo_id = std::move(repo);
    r.options.version = version;
    return r;
  }
  Expected<FetchedKernel> fetch(const KernelRequest& r, bool offline = false) {
    auto o = test::fixture_options(hub_, cache_.path());
    o.offline = offline;
    HubClient c(o);
    return fetch_kernel(c, h200(), r);
  }
  test::FixtureHub hub_;
  test::TempDir cache_;
  std::string v1_, v2_;
};

TEST_F(FetchTest, VersionToVerifiedVariant) {
  auto o = test::fixture_options(hub_, cache_.path());
  HubClient c(o);
  auto k = fetch_kernel(c, h200(), request("org/relu", 1));
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->commit, v1_);
  EXPECT_EQ(k->variant, kVariant);
  EXPECT_EQ(k->metadata.id, kId);
  EXPECT_TRUE(k->verified);
  EXPECT_EQ(k->variant_dir, CacheLayout(cache_.path()).snapshot_dir(k->repo, v1_) / "build" / kVariant);
  EXPECT_TRUE(fs::exists(k->variant_dir / (kId + ".abi3.so")));
  EXPECT_EQ(test::slurp(cache_.path() / "kernels--org--relu" / "refs" / "v1"), v1_);
  EXPECT_TRUE(fs::exists(cache_.path() / "kernels--org--relu" / ".no_exist" / v1_ / "kernel-status.toml"));
  ASSERT_EQ(k->warnings.size(), 1u);
  // The first requests follow get_kernel's sequence (docs/protocol.md, Kernel repositories).
  auto reqs = hub_.requests();
  ASSERT_GE(reqs.size(), 4u);
  EXPECT_EQ(reqs[0].path, "/api/organizations/org/overview");
  EXPECT_EQ(reqs[1].path, "/api/kernels/org/relu/refs");
  EXPECT_EQ(reqs[2].method + " " + reqs[2].path, "HEAD /kernels/org/relu/resolve/" + v1_ + "/kernel-status.toml");
  EXPECT_EQ(reqs[3].path, "/api/kernels/org/relu/tree/" + v1_ + "/build?expand=false");
  // Memoised: a second call repeats none of steps 1–4.
  hub_.clear_requests();
  ASSERT_TRUE(fetch_kernel(c, h200(), request("org/relu", 1)));
  for (const auto& r : hub_.requests()) {
    EXPECT_EQ(r.path.find("/refs"), std::string::npos);
    EXPECT_EQ(r.path.find("/overview"), std::string::npos);
  }
  // Offline afterwards: same result, no HTTP.
  hub_.clear_requests();
  auto off = fetch(request("org/relu", 1), true);
  ASSERT_TRUE(off) << off.error().describe();
  EXPECT_TRUE(off->verified);
  EXPECT_TRUE(hub_.requests().empty());
}

// A metadata.json the client cannot read (here nested 100,000 deep) fails the load with
// InvalidMetadata, and neither its snapshot pointer nor its blob stays in the cache: an offline run
// after it finds nothing to trip over.
TEST_F(FetchTest, UnreadableMetadataDoesNotStayInTheCache) {
  auto files = test::sample_variant_files(kVariant, kId);
  files["build/" + kVariant + "/metadata.json"] =
      FixtureFile{R"({"name":)" + std::string(100000, '[') + std::string(100000, ']') + "}"};
  const std::string commit = hub_.commit("org/deep", "v1", files);
  hub_.set_trusted("org", true);
  auto k = fetch(request("org/deep", 1));
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::InvalidMetadata) << k.error().describe();
  CacheLayout cache(cache_.path());
  const RepoRef repo{RepoType::Kernel, "org/deep"};
  EXPECT_FALSE(fs::exists(cache.snapshot_file(repo, commit, "build/" + kVariant + "/metadata.json")));
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache.repo_dir(repo) / "blobs", ec))
    EXPECT_LT(fs::file_size(e.path()), 100000u) << "the unreadable metadata blob stayed: " << e.path();
  auto offline = fetch(request("org/deep", 1), true);
  ASSERT_FALSE(offline);
  EXPECT_NE(offline.error().code, ErrorCode::InvalidMetadata) << "the offline run met the bad file again";
}

TEST_F(FetchTest, VersionAndRevisionRules) {
  auto both = request("org/relu", 1);
  both.options.revision = "main";
  EXPECT_EQ(fetch(both).error().message, "Only one of `revision` or `version` must be specified.");
  KernelRequest neither;
  neither.repo_id = "org/relu";
  EXPECT_EQ(fetch(neither).error().code, ErrorCode::InvalidArgument);
  auto missing = fetch(request("org/relu", 3));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::RevisionNotFound);
  EXPECT_EQ(missing.error().message, "Version 3 not found, available versions: 1, 2");
  auto offline = fetch(request("org/relu", 1), true);
  EXPECT_EQ(offline.error().code, ErrorCode::OfflineMiss);
  EXPECT_EQ(offline.error().message.rfind("Version 1 of 'org/relu' is not available in the local cache", 0), 0u);
  KernelRequest by_branch;
  by_branch.repo_id = "org/relu";
  by_branch.options.revision = "v2";
  auto k = fetch(by_branch);
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->commit, v2_);
  EXPECT_EQ(fetch(request("nobody/nothing", 1)).error().code, ErrorCode::Untrusted);
  auto unknown = request("org/nothing", 1);
  EXPECT_EQ(fetch(unknown).error().code, ErrorCode::RepoNotFound);
}

TEST_F(FetchTest, NoVariantListsEveryCandidate) {
  auto files = test::sample_variant_files("torch29-cxx11-cu126-x86_64-linux", kId);
  auto more = test::sample_variant_files("torch212-cxx11-cu130-aarch64-linux", kId);
  files.insert(more.begin(), more.end());
  const std::string commit = hub_.commit("org/other", "v1", files);
  auto k = fetch(request("org/other", 1));
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::NoVariant);
  // kernels names the commit a version resolved to.
  EXPECT_EQ(k.error().message, "Cannot find a build variant for this system in org/other (revision: " + commit + ")");
  std::string notes;
  for (const auto& n : k.error().notes) notes += n + "\n";
  EXPECT_NE(notes.find("torch29-cxx11-cu126-x86_64-linux"), std::string::npos) << notes;
  EXPECT_NE(notes.find("torch212-cxx11-cu130-aarch64-linux"), std::string::npos) << notes;
}

TEST_F(FetchTest, BadMetadata) {
  auto files = test::sample_variant_files(kVariant, kId);
  files.erase("build/" + kVariant + "/metadata.json");
  hub_.commit("org/nometa", "v1", files);
  auto nometa = fetch(request("org/nometa", 1));
  ASSERT_FALSE(nometa);
  EXPECT_EQ(nometa.error().code, ErrorCode::InvalidMetadata);
  files["build/" + kVariant + "/metadata.json"] = {R"({"name":"relu","version":1,"license":"x","python-depends":[],"backend":{"type":"cuda"}})", false};
  hub_.commit("org/noid", "v1", files);
  auto noid = fetch(request("org/noid", 1));
  ASSERT_FALSE(noid);
  EXPECT_EQ(noid.error().code, ErrorCode::InvalidMetadata);
  EXPECT_NE(noid.error().message.find("missing field `id`"), std::string::npos) << noid.error().message;
  files["build/" + kVariant + "/metadata.json"] = {"{not json", false};
  hub_.commit("org/garbage", "v1", files);
  EXPECT_EQ(fetch(request("org/garbage", 1)).error().code, ErrorCode::InvalidMetadata);
}

TEST_F(FetchTest, DigestMismatchDeletesTheBlob) {
  auto files = test::sample_variant_files(kVariant, kId);
  files["build/" + kVariant + "/__init__.py"].content = "import os  # changed after hashing\n";
  hub_.commit("org/bad", "v1", files);
  auto k = fetch(request("org/bad", 1));
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::Integrity);
  EXPECT_EQ(k.error().message.rfind("build/" + kVariant + "/__init__.py: does not match the digest", 0), 0u)
      << k.error().message;
  bool init_present = false;
  for (const auto& e : fs::recursive_directory_iterator(cache_.path() / "kernels--org--bad"))
    if (e.path().filename() == "__init__.py" && e.path().parent_path().filename() == kVariant) init_present = true;
  EXPECT_FALSE(init_present);
}

// A shared cache whose snapshot link was pointed at another file: the mismatch is reported and the
// link removed, but the file it pointed at is not deleted (only a blob of the repo folder is).
TEST_F(FetchTest, PlantedLinkOutsideTheCacheIsNotFollowedToDelete) {
  auto k = fetch(request("org/relu", 1));
  ASSERT_TRUE(k) << k.error().describe();
  const fs::path link = k->variant_dir / "__init__.py";
  ASSERT_TRUE(fs::is_symlink(link));
  test::TempDir outside;
  const fs::path victim = outside.path() / "victim.txt";
  std::ofstream(victim) << "someone else's file\n";
  fs::remove(link);
  fs::create_symlink(victim, link);
  auto again = fetch(request("org/relu", 1), /*offline=*/true);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::Integrity) << again.error().describe();
  EXPECT_TRUE(fs::exists(victim));
  EXPECT_FALSE(fs::is_symlink(link));  // the planted link is gone
}

TEST_F(FetchTest, DeviceArchCheck) {
  auto files = test::sample_variant_files(kVariant, kId);
  auto& meta = files["build/" + kVariant + "/metadata.json"].content;
  meta.replace(meta.find("{\"type\":\"cuda\"}"), 15, "{\"type\":\"cuda\",\"archs\":[\"8.0\",\"8.6\"]}");
  hub_.commit("org/ampere", "v1", files);
  auto k = fetch(request("org/ampere", 1));
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::Unsupported);
  EXPECT_NE(k.error().message.find("CUDA capability 9.0 of the current device is not supported by the architectures "
                                   "of the build: 8.0, 8.6"), std::string::npos);
  EXPECT_TRUE(k.error().message.ends_with(
      "Warning: the kernel may fail or crash the process at run time when it does not support the device."));
  auto r = request("org/ampere", 1);
  r.check_arch = false;
  EXPECT_TRUE(fetch(r));
}

// kernels' ROCm check: the device's gcnArchName (without features) must be one of the build's
// archs, by name.
TEST_F(FetchTest, DeviceArchCheckRocm) {
  const std::string variant = "torch212-cxx11-rocm64-x86_64-linux";
  auto files = test::sample_variant_files(variant, "_relu_rocm_abc1234");
  auto& meta = files["build/" + variant + "/metadata.json"].content;
  ASSERT_NE(meta.find("{\"type\":\"cuda\"}"), std::string::npos);
  meta.replace(meta.find("{\"type\":\"cuda\"}"), 15, "{\"type\":\"rocm\",\"archs\":[\"gfx90a\",\"gfx1100\"]}");
  hub_.commit("org/mi", "v1", files);
  variants::HostInfo mi300 = h200();
  mi300.backend = variants::Backend{variants::BackendKind::Rocm, variants::Version{6, 4}};
  mi300.cuda_capability.reset();
  mi300.rocm_arch = "gfx942";
  auto o = test::fixture_options(hub_, cache_.path());
  HubClient c(o);
  auto k = fetch_kernel(c, mi300, request("org/mi", 1));
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::Unsupported);
  EXPECT_NE(k.error().message.find("variant '" + variant + "' does not support the current device: ROCm arch gfx942 "
                                   "of the current device is not supported by the architectures of the build: "
                                   "gfx90a, gfx1100. The declared"),
            std::string::npos)
      << k.error().message;
  mi300.rocm_arch = "gfx90a";
  EXPECT_TRUE(fetch_kernel(c, mi300, request("org/mi", 1))) << "gfx90a is listed";
  mi300.rocm_arch.reset();  // no device: nothing to compare, as kernels without a GPU
  EXPECT_TRUE(fetch_kernel(c, mi300, request("org/mi", 1)));
}

TEST(DeviceArch, Table) {
  using variants::Version;
  auto admit = [](std::vector<std::string> a, int M, int m) { return cuda_archs_admit(a, Version{M, m}); };
  EXPECT_TRUE(admit({"8.0"}, 8, 0));
  EXPECT_TRUE(admit({"8.0"}, 8, 6));
  EXPECT_FALSE(admit({"8.0"}, 7, 5));
  EXPECT_FALSE(admit({"8.0"}, 9, 0));
  EXPECT_FALSE(admit({"8.6"}, 8, 0));
  EXPECT_TRUE(admit({"9.0a"}, 9, 0));
  EXPECT_FALSE(admit({"9.0a"}, 9, 1));
  EXPECT_TRUE(admit({"10.0f"}, 10, 3));
  EXPECT_FALSE(admit({"10.0f"}, 12, 0));
  for (auto [M, m] : {std::pair{9, 0}, {9, 1}, {10, 0}, {12, 1}}) EXPECT_TRUE(admit({"9.0+PTX"}, M, m));
  EXPECT_FALSE(admit({"9.0+PTX"}, 8, 6));
  EXPECT_TRUE(admit({"9.0a+PTX"}, 9, 0));
  EXPECT_FALSE(admit({"9.0a+PTX"}, 10, 0));
  EXPECT_TRUE(admit({"10.0f+PTX"}, 10, 3));
  EXPECT_FALSE(admit({"10.0f+PTX"}, 12, 0));
  EXPECT_FALSE(admit({"garbage", "8.0"}, 9, 0));
  EXPECT_TRUE(admit({"garbage"}, 9, 0));
  // Numbers of any length, as Python's int(): "00009.0" is 9.0, not unreadable.
  EXPECT_FALSE(admit({"00009.0"}, 8, 0));
  EXPECT_TRUE(admit({"00009.0"}, 9, 0));
  EXPECT_FALSE(admit({"12345678901.0"}, 12, 0));
}

TEST_F(FetchTest, AFailingHubFallsBackToTheCachedRef) {
  auto o = test::fixture_options(hub_, cache_.path());
  HubClient c(o);
  RepoRef repo{RepoType::Kernel, "org/relu"};
  ASSERT_EQ(resolve_commit(c, repo, std::nullopt, "v1").value(), v1_);  // writes refs/v1
  test::Faults f;
  f.match = "/revision/";
  f.fail_count = 1000;
  f.fail_status = 500;
  hub_.set_faults(f);
  hub_.clear_requests();
  auto cached = resolve_commit(c, repo, std::nullopt, "v1");  // as huggingface_hub: the cached ref
  ASSERT_TRUE(cached) << cached.error().describe();
  EXPECT_EQ(*cached, v1_);
  EXPECT_EQ(hub_.requests().size(), 1u);  // one attempt: the answer is cached
  auto uncached = resolve_commit(c, repo, std::nullopt, "v2");  // nothing cached: the Hub's error
  ASSERT_FALSE(uncached);
  EXPECT_EQ(uncached.error().code, ErrorCode::Network);
  hub_.set_faults({});
  EXPECT_EQ(resolve_commit(c, repo, std::nullopt, "nope").error().code, ErrorCode::RevisionNotFound);
}

TEST_F(FetchTest, SuggestsTheNewestVersionWhenItFits) {
  hub_.commit("org/nofit", "v1", test::sample_variant_files("torch212-cxx11-cu130-aarch64-linux", kId));
  hub_.commit("org/nofit", "v2", test::sample_variant_files(kVariant, kId));
  auto k = fetch(request("org/nofit", 1));
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::NoVariant);
  EXPECT_EQ(k.error().notes.back(),
            "However, version v2 of 'org/nofit' has a build compatible with your system (" + kVariant +
                "). Consider upgrading to that version by specifying the `version` argument.");
  EXPECT_EQ(k.error().hint, "version v2 has a build for this host: ask for version 2");
  // Asking for the newest version that does not fit suggests nothing.
  hub_.commit("org/nofit", "v3", test::sample_variant_files("torch212-cxx11-cu130-aarch64-linux", kId));
  auto newest = fetch(request("org/nofit", 3));
  ASSERT_FALSE(newest);
  EXPECT_EQ(newest.error().notes.back().find("However"), std::string::npos);
}

TEST_F(FetchTest, LoadsTheCanonicalFolderAndWarnsAboutInvalidNames) {
  // kernels loads build/<variant_str>/: `torch2012` is torch 2.12 spelt with a leading zero.
  auto files = test::sample_variant_files("torch2012-cxx11-cu130-x86_64-linux", kId + "z");
  auto canonical = test::sample_variant_files(kVariant, kId);
  files.insert(canonical.begin(), canonical.end());
  files["build/invalid-name/x.py"] = {"x = 1\n", false};
  const std::string commit = hub_.commit("org/zeros", "v1", files);
  auto k = fetch(request("org/zeros", 1));
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->variant, kVariant);
  EXPECT_EQ(k->metadata.id, kId);
  EXPECT_NE(std::find(k->warnings.begin(), k->warnings.end(),
                      "Repository org/zeros (revision: " + commit +
                          ") contains invalid build variant variant: 'invalid-name'"),
            k->warnings.end());
  // Only the zero-padded spelling: its canonical folder does not exist, as for kernels (404).
  hub_.commit("org/padded", "v1", test::sample_variant_files("torch212-cxx11-cu0130-x86_64-linux", kId));
  auto padded = fetch(request("org/padded", 1));
  ASSERT_FALSE(padded);
  EXPECT_NE(padded.error().message.find(kVariant), std::string::npos) << padded.error().message;
}

TEST_F(FetchTest, ModelTypeFallbackAndRedirectErrors) {
  hub_.commit("org/legacy", "v1", test::sample_variant_files(kVariant, kId), "model");
  auto k = fetch(request("org/legacy", 1));
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->repo.type, RepoType::Model);
  EXPECT_TRUE(fs::exists(cache_.path() / "models--org--legacy" / "refs" / "v1"));
  auto r = request("org/legacy", 1);
  r.repo_type = RepoType::Kernel;  // explicit type: no fallback
  EXPECT_EQ(fetch(r).error().code, ErrorCode::RepoNotFound);
  // Offline finds the model folder's refs too.
  EXPECT_TRUE(fetch(request("org/legacy", 1), true));

  hub_.commit("org/moved", "v1", {{"kernel-status.toml", {"destination = \"org/relu\"\n", false}}});
  auto bad = fetch(request("org/moved", 1));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "kernel-status.toml must contain a 'kind' field");
}

// A trusted repo's kernel-status.toml may point elsewhere; the destination's publisher must be
// trusted as well, or trust_remote_code given (found by a security review).
TEST_F(FetchTest, RedirectToAnUntrustedPublisherIsRefused) {
  hub_.commit("evil/relu", "main", test::sample_variant_files(kVariant, kId));
  hub_.set_trusted("evil", false);
  hub_.commit("org/moved", "v1",
              {{"kernel-status.toml", {"kind = \"redirect\"\ndestination = \"evil/relu\"\nrevision = \"main\"\n", false}}});
  auto refused = fetch(request("org/moved", 1));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::Untrusted);
  EXPECT_NE(refused.error().message.find("'evil/relu' is not from a trusted publisher"), std::string::npos)
      << refused.error().message;
  auto trusting = request("org/moved", 1);
  trusting.options.trust_remote_code = true;
  auto k = fetch(trusting);
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->repo.id, "evil/relu");
}

// A locked load pins a commit of the repo it names: the commit's kernel-status.toml is not followed
// (kernels' locked resolvers read no status file), so a lock cannot be moved to another repo's
// branch after the fact.
TEST_F(FetchTest, PinnedRequestsDoNotFollowTheRedirect) {
  hub_.commit("evil/relu", "main", test::sample_variant_files(kVariant, kId + "evil"));
  auto files = test::sample_variant_files(kVariant, kId);
  files["kernel-status.toml"] = {"kind = \"redirect\"\ndestination = \"evil/relu\"\n", false};
  const std::string locked = hub_.commit("org/pinned", "v1", files);
  auto r = request("org/pinned", 0);
  r.options.version.reset();
  r.options.revision = locked;
  r.options.trust_remote_code = true;  // as load_kernel: the lock was trusted when it was written
  auto followed = fetch(r);
  ASSERT_TRUE(followed) << followed.error().describe();
  EXPECT_EQ(followed->repo.id, "evil/relu");
  r.follow_redirect = false;
  auto k = fetch(r);
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->repo.id, "org/pinned");
  EXPECT_EQ(k->commit, locked);
  EXPECT_EQ(k->metadata.id, kId);
}

// A server that names a commit with a path instead of a hash writes nothing outside the cache.
TEST_F(FetchTest, ANonHexCommitFromTheServerIsRefused) {
  test::TempDir outside;
  const std::string escape = "../../../../../../../../../../.." + (outside.path() / "pwned").string();
  hub_.set_ref_target("org/relu", "v1", escape);
  auto k = fetch(request("org/relu", 1));
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::Protocol);
  EXPECT_FALSE(fs::exists(outside.path() / "pwned"));
}

TEST_F(FetchTest, EscapingListingWritesNothing) {
  test::Faults f;
  f.escape_path = true;
  f.match = "/tree/";
  hub_.set_faults(f);
  auto k = fetch(request("org/relu", 1));
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::Protocol);
  EXPECT_FALSE(fs::exists(cache_.path() / "escape"));
  EXPECT_FALSE(fs::exists(cache_.path() / "kernels--org--relu" / "escape"));
}

TEST_F(FetchTest, LocalKernelLayouts) {
  for (const auto& [path, f] : test::sample_variant_files(kVariant, kId))
    ASSERT_TRUE(write_file_atomic(cache_.path() / "repo" / path, f.content));
  for (fs::path p : {cache_.path() / "repo", cache_.path() / "repo" / "build", cache_.path() / "repo" / "build" / kVariant}) {
    auto k = open_local_kernel(p, h200());
    ASSERT_TRUE(k) << p << ": " << k.error().describe();
    EXPECT_EQ(k->variant, kVariant);
    EXPECT_TRUE(k->verified);
  }
  // A kernel source tree: `torch-ext/` parses as a noarch variant that fits nothing, so the
  // variants under build/ are used (the Python client does the same).
  fs::create_directories(cache_.path() / "repo" / "torch-ext");
  auto src = open_local_kernel(cache_.path() / "repo", h200());
  ASSERT_TRUE(src) << src.error().describe();
  EXPECT_EQ(src->variant, kVariant);
  EXPECT_EQ(open_local_kernel(cache_.path() / "nope", h200()).error().message,
            "Could not find kernel in " + (cache_.path() / "nope").string());
  fs::create_directories(cache_.path() / "empty");
  EXPECT_FALSE(open_local_kernel(cache_.path() / "empty", h200()));
}

}  // namespace
