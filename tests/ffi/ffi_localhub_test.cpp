// khub::ffi end to end (label e2e): each bundled kernel's build, all its variants, pushed to the local hub;
// khub::ffi::get_kernel downloads, verifies and loads its tvm-ffi build and the op computes on the CPU. No
// torch anywhere in this program.
#include <gtest/gtest.h>

#include "ffi_localhub_support.h"
#include "ffi_test_support.h"
#include "khub/hub/kernel_fetch.h"
#include "test_util.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;
using namespace khub::ffi;
using namespace khub::ffi::test;

class FfiLocalhub : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new khub::test::TempDir();
    server_ = start_hub(dir_->path() / "hub").release();
    for (const auto& name : bundled_kernels()) {
      auto pushed = push(fs::path(KHUB_KERNELS_DIR) / name / "build", *server_, "org/" + name);
      ASSERT_TRUE(pushed) << name << ": " << pushed.error().describe();
    }
  }
  static void TearDownTestSuite() {
    hub::drop_shared_clients();
    server_->stop();
    delete server_;
    delete dir_;
  }
  static khub::test::TempDir* dir_;
  static localhub::Server* server_;
};
khub::test::TempDir* FfiLocalhub::dir_ = nullptr;
localhub::Server* FfiLocalhub::server_ = nullptr;

TEST_F(FfiLocalhub, EveryBundledKernelsTvmFfiBuildLoadsAndComputesOnCpu) {
  for (const auto& name : bundled_kernels()) {
    SCOPED_TRACE(name);
    GetKernelOptions o = version_1_from(*server_, dir_->path() / "cache");
    o.backend = "cpu";
    auto k = get_kernel("org/" + name, o);
    ASSERT_TRUE(k) << k.error().describe();
    EXPECT_EQ(k->variant(), "tvm-ffi01-cpu-x86_64-linux");
    EXPECT_TRUE(k->verified());
    EXPECT_EQ(k->repo_id(), "org/" + name);
    EXPECT_FALSE(k->commit().empty());
    EXPECT_EQ(k->path().parent_path().filename(), "build");
    expect_kernel_computes(*k, name);
    auto has = has_kernel("org/" + name, o);
    ASSERT_TRUE(has) << has.error().describe();
    EXPECT_TRUE(*has);
  }
}

// Without a backend override the choice is the best accepted variant for this torch-less host (the
// cu130 build where a CUDA runtime is found, as here with the toolkit installed; cpu elsewhere), and
// its `<op>_cpu` functions still serve the CPU buffers.
TEST_F(FfiLocalhub, DetectedBackendChoosesPythonsVariant) {
  GetKernelOptions o = version_1_from(*server_, dir_->path() / "cache");
  auto k = get_kernel("org/rmsnorm", o);
  if (!k && k.error().describe().find("libcudart") != std::string::npos) GTEST_SKIP() << k.error().describe();
  ASSERT_TRUE(k) << k.error().describe();
  ASSERT_NE(k->resolution().chosen(), nullptr);
  EXPECT_EQ(k->variant(), k->resolution().chosen()->name);
  const bool cuda = current_host().backend.kind == variants::BackendKind::Cuda;
  EXPECT_EQ(k->variant().rfind(cuda ? "tvm-ffi01-cu" : "tvm-ffi01-cpu", 0), 0u) << k->variant();
  expect_kernel_computes(*k, "rmsnorm");
}

TEST_F(FfiLocalhub, MissingVersionIsRevisionNotFound) {
  GetKernelOptions o = version_1_from(*server_, dir_->path() / "cache");
  o.version = 7;
  auto k = get_kernel("org/rmsnorm", o);
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::RevisionNotFound) << k.error().describe();
}

}  // namespace
