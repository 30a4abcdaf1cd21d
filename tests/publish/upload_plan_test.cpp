#include "khub/publish/upload_plan.h"

#include <gtest/gtest.h>

#include "build_fixture.h"

namespace khub::publish {
namespace {

LocalFile local(const std::string& path, const std::string& sha1 = "1111", const std::string& sha256 = "aaaa") {
  return {path, "/dev/null", 1, sha256, sha1};
}

std::vector<std::string> paths(const std::vector<LocalFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.repo_path);
  return out;
}

PlanInput base_input(bool new_branch) {
  PlanInput in;
  in.branch = "v1";
  in.new_branch = new_branch;
  in.variants = {"torch-cuda"};
  in.build_files = {local("build/torch-cuda/__init__.py"), local("build/torch-cuda/metadata.json", "2222")};
  in.benchmark_files = {local("benchmarks/benchmark_a.py")};
  in.remote_branch = {
      {"build/torch-cuda/__init__.py", "1111", std::nullopt},  // same bytes: skipped
      {"build/torch-cuda/metadata.json", "9999", std::nullopt},
      {"build/torch-cuda/old.py", "1", std::nullopt},
      {"build/torch-cpu/__init__.py", "1", std::nullopt},
      {"benchmarks/benchmark_old.py", "1", std::nullopt},
      {"benchmarks/data.csv", "1", std::nullopt},
      {"benchmarks/sub/benchmark_x.py", "1", std::nullopt},  // kernel-builder tests the file name only
      {"README.md", "1", std::nullopt},
  };
  return in;
}

TEST(UploadPlan, ExistingBranchTouchesOnlyPushedVariants) {
  auto plans = plan_upload(base_input(false));
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].branch, "v1");
  EXPECT_EQ(paths(plans[0].adds),
            (std::vector<std::string>{"benchmarks/benchmark_a.py", "build/torch-cuda/metadata.json"}));
  EXPECT_EQ(plans[0].deletes,
            (std::vector<std::string>{"benchmarks/benchmark_old.py", "benchmarks/sub/benchmark_x.py",
                                      "build/torch-cuda/old.py"}));
  EXPECT_EQ(plans[0].unchanged, 1u);
}

TEST(UploadPlan, NewBranchPurgesInheritedBuildAndBenchmarks) {
  auto plans = plan_upload(base_input(true));
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].deletes, (std::vector<std::string>{"benchmarks/benchmark_old.py", "benchmarks/data.csv",
                                                        "benchmarks/sub/benchmark_x.py", "build/torch-cpu/__init__.py",
                                                        "build/torch-cuda/old.py"}));
}

TEST(UploadPlan, ReadmeGoesToMainFirst) {
  auto in = base_input(false);
  in.readme = local("README.md", "3333");
  in.remote_main = {{"README.md", "3333", std::nullopt}};
  auto same = plan_upload(in);
  ASSERT_EQ(same.size(), 2u);
  EXPECT_EQ(same[0].branch, "main");
  EXPECT_TRUE(same[0].adds.empty());
  in.remote_main = {};
  auto changed = plan_upload(in);
  EXPECT_EQ(paths(changed[0].adds), std::vector<std::string>{"README.md"});
  in.branch = "main";
  auto one = plan_upload(in);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].branch, "main");
}

TEST(UploadPlan, LfsComparedBySha256) {
  auto f = local("build/v/x.so", "1111", "bbbb");
  EXPECT_TRUE(has_same_content(f, {"build/v/x.so", "pointer-sha1", std::string("bbbb")}));
  EXPECT_FALSE(has_same_content(f, {"build/v/x.so", "1111", std::string("cccc")}));
  EXPECT_TRUE(has_same_content(f, {"build/v/x.so", "1111", std::nullopt}));
}

// A Xet upload reuses the chunks of the version a file replaces: the plan names it per path, and
// only for files that change (an unchanged one is not uploaded at all).
TEST(UploadPlan, NamesTheXetVersionEachChangedFileReplaces) {
  PlanInput in = base_input(false);
  in.build_files.push_back(local("build/torch-cuda/lib.so", "3333", "new-sha"));
  in.build_files.push_back(local("build/torch-cuda/same.so", "4444", "same-sha"));
  in.remote_branch.push_back({"build/torch-cuda/lib.so", "x", std::string("old-sha"), std::string("xet-old"), 100});
  in.remote_branch.push_back({"build/torch-cuda/same.so", "x", std::string("same-sha"), std::string("xet-same"), 5});
  auto plans = plan_upload(in);
  ASSERT_EQ(plans.size(), 1u);
  ASSERT_EQ(plans[0].replaced_xet.size(), 1u);
  const RemoteFile& old = plans[0].replaced_xet.at("build/torch-cuda/lib.so");
  EXPECT_EQ(old.xet_hash, "xet-old");
  EXPECT_EQ(old.size, 100u);
}

using Collect = khub::testing::BuildFixture;

TEST_F(Collect, CardOnlyFromVariantsDirAndPycSkipped) {
  add_variant("torch-cuda");
  write("torch-cuda/__pycache__/a.cpython-311.pyc", "x");
  write("torch-cuda/b.pyc", "x");
  std::ofstream(kernel() / "CARD.md") << "outside the build dir: ignored\n";
  std::filesystem::create_symlink("__init__.py", build() / "torch-cuda" / "alias.py");
  auto tree = discover_build(kernel());
  ASSERT_TRUE(tree);
  auto files = collect_local_files(*tree);
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_FALSE(files->readme);
  EXPECT_EQ(paths(files->build), (std::vector<std::string>{"build/torch-cuda/__init__.py", "build/torch-cuda/alias.py",
                                                           "build/torch-cuda/metadata.json"}));
  EXPECT_EQ(files->build[0].git_sha1, "1cec5723464b586acbda5ab039a6248d38255033");
  EXPECT_EQ(files->build[1].sha256, files->build[0].sha256);
  write("CARD.md", "# card\n");
  auto with_card = collect_local_files(*tree);
  ASSERT_TRUE(with_card && with_card->readme);
  EXPECT_EQ(with_card->readme->repo_path, "README.md");
}

}  // namespace
}  // namespace khub::publish
