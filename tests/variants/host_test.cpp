// Host facts: backend override, host JSON, torch-free detection, default candidates.
#include "khub/variants/host.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sys/utsname.h>

#include "khub/variants/candidates.h"
#include "khub/variants/resolve.h"
#include "test_hosts.h"

namespace khub::variants {
namespace {

TEST(WithBackend, CpuAndDetectedAreAllowed) {
  HostInfo h = linux_host({2, 10}, cuda(12, 8));
  Expected<HostInfo> as_cpu = with_backend(h, "cpu");
  ASSERT_TRUE(as_cpu);
  EXPECT_EQ(as_cpu->backend, cpu());
  EXPECT_EQ(as_cpu->torch, h.torch);
  EXPECT_EQ(*with_backend(h, "cuda"), h);
  // With `cpu`, the checks see the token `cpu`: arch CPU builds and torch-cpu fit a CUDA machine.
  Resolution r = resolve_variants({"torch210-cxx11-cu128-x86_64-linux", "torch210-cxx11-cpu-x86_64-linux",
                                   "torch-cpu", "torch-cuda"},
                                  *as_cpu);
  EXPECT_EQ(r.accepted(), (std::vector<std::string>{"torch210-cxx11-cpu-x86_64-linux", "torch-cpu"}));
}

TEST(WithBackend, OthersAreRejectedWithUpstreamText) {
  const std::pair<Backend, const char*> cases[] = {
      {cuda(12, 8), "Invalid backend 'xpu', system supported backends: cpu, cuda"},
      {cpu(), "Invalid backend 'xpu', system supported backends: cpu"},
      {backend(BackendKind::Cann, 8, 3), "Invalid backend 'xpu', system supported backends: cann, cpu"},
      {metal(), "Invalid backend 'xpu', system supported backends: cpu, metal"},
  };
  for (const auto& [b, text] : cases) {
    Expected<HostInfo> r = with_backend(linux_host({2, 10}, b), "xpu");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(r.error().message, text);
  }
  EXPECT_EQ(with_backend(linux_host({2, 10}, backend(BackendKind::Cann, 8, 3)), "npu").error().message,
            "Invalid backend 'npu', system supported backends: cann, cpu");
  EXPECT_FALSE(with_backend(linux_host({2, 10}, cuda(12, 8)), "CUDA"));
}

constexpr const char* kFullHost = R"({"os": "linux", "cpu": "x86_64", "torch": "2.12", "cxx11_abi": true,
  "backend": "cuda", "backend_version": "13.0", "tvm_ffi": "0.1", "macos": null})";

TEST(HostJson, ParsesEveryKey) {
  Expected<HostInfo> h = host_from_json(kFullHost);
  ASSERT_TRUE(h) << h.error().message;
  HostInfo want = linux_host({2, 12}, cuda(13, 0));
  want.tvm_ffi = Version{0, 1};
  EXPECT_EQ(*h, want);

  h = host_from_json(R"({"os": "darwin", "cpu": "aarch64", "torch": "2.10.1", "cxx11_abi": null, "backend": "metal",
                         "backend_version": null, "tvm_ffi": null, "macos": "26.1", "cuda_capability": null})");
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(*h, darwin_host(metal(), Version{26, 1}));
}

TEST(HostJson, RoundTrips) {
  HostInfo a = linux_host({2, 12}, cuda(13, 0));
  a.cuda_capability = Version{9, 0};
  HostInfo b = darwin_host(metal(), Version{15, 7});
  HostInfo c = linux_host(std::nullopt, backend(BackendKind::Xpu, 2025, 3));
  HostInfo d = linux_host({2, 9}, rocm(6, 4));
  d.rocm_arch = "gfx942";
  for (const HostInfo& h : {a, b, c, d}) {
    Expected<HostInfo> back = host_from_json(host_to_json(h));
    ASSERT_TRUE(back) << back.error().message << "\n" << host_to_json(h);
    EXPECT_EQ(*back, h);
  }
}

TEST(HostJson, ErrorsNameTheKey) {
  const std::pair<std::string, std::string> cases[] = {
      {"{", "host json: not valid JSON: parse error at line 1, column 2"},
      {"[]", "host json: expected an object, got array"},
      {R"({"os": "linux"})", "host json: missing key 'cpu'"},
      {R"({"os": "Linux", "cpu": "x86_64", "torch": null, "cxx11_abi": null, "backend": "cpu",
           "backend_version": null, "tvm_ffi": null, "macos": null})",
       "host json: 'os' must be one of linux, darwin, windows, got \"Linux\""},
      {R"({"os": "linux", "cpu": 1, "torch": null, "cxx11_abi": null, "backend": "cpu",
           "backend_version": null, "tvm_ffi": null, "macos": null})",
       "host json: 'cpu' must be a non-empty string, got 1"},
      {R"({"os": "linux", "cpu": "x86_64", "torch": 2.12, "cxx11_abi": null, "backend": "cpu",
           "backend_version": null, "tvm_ffi": null, "macos": null})",
       "host json: 'torch' must be a version string like \"2.12\" or null, got 2.12"},
      {R"({"os": "linux", "cpu": "x86_64", "torch": null, "cxx11_abi": "yes", "backend": "cpu",
           "backend_version": null, "tvm_ffi": null, "macos": null})",
       "host json: 'cxx11_abi' must be true, false or null, got \"yes\""},
      {R"({"os": "linux", "cpu": "x86_64", "torch": null, "cxx11_abi": null, "backend": "npu",
           "backend_version": null, "tvm_ffi": null, "macos": null})",
       "host json: 'backend' must be one of cpu, cuda, rocm, xpu, metal, cann, neuron, tpu, got \"npu\""},
      {R"({"os": "linux", "cpu": "x86_64", "torch": null, "cxx11_abi": null, "backend": "cuda",
           "backend_version": null, "tvm_ffi": null, "macos": null})",
       "host json: 'backend_version' is required for backend \"cuda\""},
      {R"({"os": "linux", "cpu": "x86_64", "torch": null, "cxx11_abi": null, "backend": "cpu",
           "backend_version": "1.0", "tvm_ffi": null, "macos": null})",
       "host json: 'backend_version' must be null for backend \"cpu\""},
      {R"({"os": "linux", "cpu": "x86_64", "torch": null, "cxx11_abi": null, "backend": "cpu",
           "backend_version": null, "tvm_ffi": "x", "macos": null, "extra": 1})",
       "host json: unknown key 'extra'"},
      {R"({"os": "linux", "cpu": "x86_64", "torch": null, "cxx11_abi": null, "backend": "rocm",
           "backend_version": "6.4", "tvm_ffi": null, "macos": null, "rocm_arch": 942})",
       "host json: 'rocm_arch' must be a gfx name such as \"gfx942\" or null, got 942"},
  };
  for (const auto& [json, message] : cases) {
    Expected<HostInfo> h = host_from_json(json);
    ASSERT_FALSE(h) << json;
    EXPECT_EQ(h.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(h.error().message.substr(0, message.size()), message) << json;
    EXPECT_EQ(h.error().message.find('\n'), std::string::npos);
  }
}

// The amdgpu driver's topology as sysfs shows it: node 0 the CPU (gfx_target_version 0), then
// GPU nodes; the arch is rocminfo's gfx<major><minor hex><stepping hex>.
class RocmTopology : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("khub_kfd_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void node(const std::string& name, long long gfx_target_version) {
    std::filesystem::create_directories(root_ / name);
    std::ofstream(root_ / name / "properties") << "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version "
                                               << gfx_target_version << "\nvendor_id 4098\n";
  }
  std::filesystem::path root_;
};

TEST_F(RocmTopology, FirstGpuNodeNamesTheArch) {
  EXPECT_EQ(rocm_device_arch(root_), std::nullopt);  // no driver
  node("0", 0);
  EXPECT_EQ(rocm_device_arch(root_), std::nullopt);  // a CPU only
  node("2", 110001);
  node("10", 90402);
  node("1", 90010);
  EXPECT_EQ(rocm_device_arch(root_), "gfx90a");  // node 1 first, hex digits as rocminfo
  std::filesystem::remove_all(root_ / "1");
  EXPECT_EQ(rocm_device_arch(root_), "gfx1101");  // node 2 before node 10
  std::filesystem::remove_all(root_ / "2");
  EXPECT_EQ(rocm_device_arch(root_), "gfx942");
}

TEST(Detect, MatchesUnameAndIsStable) {
  struct utsname u {};
  ASSERT_EQ(uname(&u), 0);
  HostInfo h = detect_host_without_torch();
  EXPECT_EQ(h.os, "linux");
  EXPECT_EQ(h.cpu, u.machine);
  EXPECT_EQ(h.torch, std::nullopt);
  EXPECT_EQ(h.cxx11_abi, std::nullopt);
  EXPECT_EQ(h.macos, std::nullopt);
  EXPECT_TRUE(h.backend.kind == BackendKind::Cpu || h.backend.kind == BackendKind::Cuda);
  EXPECT_EQ(h.backend.kind == BackendKind::Cuda, cuda_runtime_version().has_value());
  if (h.backend.kind == BackendKind::Cuda) {
    EXPECT_EQ(h.backend.version, cuda_runtime_version());
  }
  EXPECT_EQ(detect_host_without_torch(), h);
}

TEST(DefaultCandidates, FollowBuilderNaming) {
  HostInfo h = linux_host({2, 12}, cuda(13, 0));
  EXPECT_EQ(default_candidates(h),
            (std::vector<std::string>{"torch-stable-abi210-cpu-x86_64-linux", "torch-stable-abi210-cu130-x86_64-linux",
                                      "torch212-cxx11-cpu-x86_64-linux", "torch212-cxx11-cu130-x86_64-linux",
                                      "tvm-ffi01-cpu-x86_64-linux", "tvm-ffi01-cu130-x86_64-linux", "torch-cpu",
                                      "torch-cuda"}));
  // The stable-ABI build comes first, as in the Python client.
  EXPECT_EQ(resolve_variants(default_candidates(h), h).chosen()->name, "torch-stable-abi210-cu130-x86_64-linux");
  EXPECT_EQ(resolve_variants(default_candidates(linux_host({2, 9}, cuda(13, 0))), linux_host({2, 9}, cuda(13, 0)))
                .chosen()->name,
            "torch29-cxx11-cu130-x86_64-linux");  // too old for the stable-ABI 2.10 build

  EXPECT_EQ(default_candidates(darwin_host(metal(), Version{26, 0})),
            (std::vector<std::string>{"torch-stable-abi210-cpu-aarch64-darwin", "torch-stable-abi210-metal-aarch64-darwin",
                                      "torch210-cpu-aarch64-darwin", "torch210-metal-aarch64-darwin",
                                      "tvm-ffi01-cpu-aarch64-darwin", "tvm-ffi01-metal-aarch64-darwin", "torch-cpu",
                                      "torch-metal"}));
  EXPECT_EQ(default_candidates(linux_host(std::nullopt, backend(BackendKind::Cann, 8, 3), "aarch64")),
            (std::vector<std::string>{"torch-stable-abi210-cpu-aarch64-linux",
                                      "torch-stable-abi210-cann83-aarch64-linux", "torch212-cxx11-cpu-aarch64-linux",
                                      "torch212-cxx11-cann83-aarch64-linux", "torch213-cxx11-cpu-aarch64-linux",
                                      "torch213-cxx11-cann83-aarch64-linux", "tvm-ffi01-cpu-aarch64-linux",
                                      "tvm-ffi01-cann83-aarch64-linux", "torch-cpu", "torch-npu"}));
}

}  // namespace
// A number beyond double threw nlohmann's out_of_range past the parse_error handler and ended the
// process (found by the metadata fuzzer in the same pattern).
TEST(Host, ANumberBeyondDoubleIsBadJsonNotACrash) {
  auto h = host_from_json(R"({"os": "linux", "cpu": 1e400})");
  ASSERT_FALSE(h);
  EXPECT_NE(h.error().message.find("not valid JSON"), std::string::npos) << h.error().message;
}

}  // namespace khub::variants
