// A repo named by id against a loopback Hub: the model-repo fallback and the default revision.
#include <gtest/gtest.h>

#include "fixture_hub.h"
#include "khub/hub/lookup.h"
#include "test_util.h"

namespace {
using namespace khub;
using namespace khub::hub;
namespace fs = std::filesystem;

const std::string kVariant = "torch212-cxx11-cu130-x86_64-linux";

RepoLookup named(std::string id) {
  RepoLookup l;
  l.repo_id = std::move(id);
  return l;
}

class LookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_v1_ = hub_.commit("org/relu", "v1", test::sample_variant_files(kVariant, "_relu_cuda_abc1234"));
    kernel_v2_ = hub_.commit("org/relu", "v2", test::sample_variant_files(kVariant, "_relu_cuda_abc1234"));
    legacy_ = hub_.commit("org/legacy", "v3", test::sample_variant_files(kVariant, "_legacy_cuda_abc1234"), "model");
    hub_.set_trusted("org", true);
  }
  HubClient client(bool offline = false) {
    auto o = test::fixture_options(hub_, cache_.path());
    o.offline = offline;
    return HubClient(o);
  }
  test::FixtureHub hub_;
  test::TempDir cache_;
  std::string kernel_v1_, kernel_v2_, legacy_;
};

TEST_F(LookupTest, KernelRepoAtItsNewestVersion) {
  auto c = client();
  auto at = find_revision(c, named("org/relu"));
  ASSERT_TRUE(at) << at.error().describe();
  EXPECT_EQ(at->repo, (RepoRef{RepoType::Kernel, "org/relu"}));
  EXPECT_EQ(at->version, 2);
  EXPECT_EQ(at->name(), "v2");
  EXPECT_EQ(at->commit, kernel_v2_);
  auto main = named("org/relu");
  main.when_unnamed = RepoLookup::Default::Main;
  auto at_main = choose_revision(c, main);
  ASSERT_TRUE(at_main) << at_main.error().describe();
  EXPECT_EQ(at_main->name(), "main");
  EXPECT_TRUE(at_main->commit.empty());
  auto request = kernel_request(c, named("org/relu"));
  ASSERT_TRUE(request);
  EXPECT_EQ(request->options.version, 2);
  EXPECT_FALSE(request->repo_type);  // fetch_kernel keeps its own fallback
}

TEST_F(LookupTest, MissingKernelRepoFallsBackToTheLegacyModelRepo) {
  auto c = client();
  auto at = find_revision(c, named("org/legacy"));
  ASSERT_TRUE(at) << at.error().describe();
  EXPECT_EQ(at->repo, (RepoRef{RepoType::Model, "org/legacy"}));
  EXPECT_EQ(at->name(), "v3");
  EXPECT_EQ(at->commit, legacy_);
  auto versions = find_versions(c, named("org/legacy"));
  ASSERT_TRUE(versions);
  EXPECT_EQ(versions->repo.type, RepoType::Model);
  ASSERT_EQ(versions->versions.size(), 1u);
  auto request = kernel_request(c, named("org/legacy"));
  ASSERT_TRUE(request);
  EXPECT_EQ(request->repo_type, RepoType::Model);
  EXPECT_EQ(request->options.version, 3);

  // A type named by the caller is not retried.
  auto kernel_only = named("org/legacy");
  kernel_only.type = RepoType::Kernel;
  auto refused = find_revision(c, kernel_only);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::RepoNotFound);

  // Neither type: the kernel repo's error, and the repo stays a kernel repo.
  RepoRef repo{RepoType::Kernel, "org/nothing"};
  auto none = with_model_fallback(repo, true, [&](const RepoRef& r) { return list_versions(c, r); });
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::RepoNotFound);
  EXPECT_EQ(repo.type, RepoType::Kernel);
}

TEST_F(LookupTest, OnlyMissingReposAreRetried) {
  RepoRef repo{RepoType::Kernel, "org/x"};
  int calls = 0;
  auto failing = [&](const RepoRef&) -> Expected<int> {
    ++calls;
    return Error(ErrorCode::Network, "down");
  };
  EXPECT_FALSE(with_model_fallback(repo, true, failing));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(repo.type, RepoType::Kernel);
  auto missing = [&](const RepoRef& r) -> Expected<int> {
    ++calls;
    if (r.type == RepoType::Kernel) return Error(ErrorCode::RepoNotFound, "no kernel repo");
    return 7;
  };
  auto found = with_model_fallback(repo, false, missing);
  EXPECT_FALSE(found);  // no fallback asked for
  found = with_model_fallback(repo, true, missing);
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, 7);
  EXPECT_EQ(repo.type, RepoType::Model);
}

// Offline, a model repo that is only in the cache is found the same way (OfflineMiss counts as missing).
TEST_F(LookupTest, OfflineFallbackReadsTheCache) {
  {
    auto online = client();
    auto at = find_revision(online, named("org/legacy"));
    ASSERT_TRUE(at) << at.error().describe();
    auto files = download_files(online, at->repo, at->commit, {}, true);
    ASSERT_TRUE(files) << files.error().describe();
  }
  auto offline = client(true);
  auto at = find_revision(offline, named("org/legacy"));
  ASSERT_TRUE(at) << at.error().describe();
  EXPECT_EQ(at->repo.type, RepoType::Model);
  EXPECT_EQ(at->commit, legacy_);
  auto files = download_files(offline, at->repo, at->commit, {}, true);
  ASSERT_TRUE(files) << files.error().describe();
  EXPECT_FALSE(files->empty());
  auto missing = find_revision(offline, named("org/nothing"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::OfflineMiss);
}

}  // namespace
