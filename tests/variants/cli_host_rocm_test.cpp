// The CLI's host for a khub built against a ROCm torch wheel (cli/cli_host.h), with the
// facts CMake would pass for one: no torch.version.cuda, torch.version.hip "6.4.43482-0f2d".
#define KHUB_HAVE_TORCH 1
#define KHUB_BUILT_TORCH_VERSION "2.9"
#define KHUB_BUILT_TORCH_CUDA ""
#define KHUB_BUILT_TORCH_HIP "6.4.43482-0f2d"
#define KHUB_BUILT_TORCH_CXX11_ABI 1
#include <gtest/gtest.h>

#include "cli_host.h"

namespace {

TEST(CliHost, RocmTorchIsRocmAtItsHipVersion) {
  const auto host = khub::cli::cli_host();
  EXPECT_EQ(host.backend.kind, khub::variants::BackendKind::Rocm);
  ASSERT_TRUE(host.backend.version);
  EXPECT_EQ(host.backend.token(), "rocm64");  // kernels: f"rocm{major}{minor}" of hip.split("-")[0]
  EXPECT_EQ(host.torch->str(), "2.9");
}

}  // namespace
