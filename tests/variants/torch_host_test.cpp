// torch_bridge: the host facts read from the linked LibTorch equal what the Python `kernels` client
// reads from the same torch wheel (torch version, C++11 ABI flag, backend).
#include "khub/variants/torch_host.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <torch/headeronly/version.h>

#include "run_process.h"

namespace khub::variants {
namespace {

TEST(TorchHost, FillsTorchFactsAndKeepsPlatform) {
  const HostInfo h = detect_host();
  ASSERT_TRUE(h.torch.has_value());
  EXPECT_EQ(*h.torch, (Version{TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR}));
  const HostInfo plain = detect_host_without_torch();
  EXPECT_EQ(h.os, plain.os);
  EXPECT_EQ(h.cpu, plain.cpu);
  EXPECT_EQ(h.cuda_capability, plain.cuda_capability);
  EXPECT_EQ(h.cxx11_abi.has_value(), h.os == "linux");
}

TEST(TorchHost, MatchesThePythonClient) {
  const auto dir = scratch_dir("torch-host");
  write_text(dir / "request.json", R"({"torch_host": true})");
  ProcessResult r = run_command(quote(KHUB_PYTHON) + " " + quote(KHUB_ORACLE_SCRIPT) + " < " +
                                    quote((dir / "request.json").string()),
                                dir);
  std::filesystem::remove_all(dir);
  if (r.exit_code != 0) GTEST_SKIP() << "python torch/kernels unavailable: " << r.err;
  const auto theirs = nlohmann::json::parse(r.out)["torch_host"];
  const HostInfo h = detect_host();
  EXPECT_EQ(theirs["torch"], h.torch->str());
  EXPECT_EQ(theirs["cxx11_abi"], h.cxx11_abi.value_or(false));
  EXPECT_EQ(theirs["backend"], h.backend.token());
}

}  // namespace
}  // namespace khub::variants
