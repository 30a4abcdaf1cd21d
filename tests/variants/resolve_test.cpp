// Acceptance, preference order and trace: worked tables for name sets R and M and other hosts, and
// the resolution cases of upstream's test_variants.py.
#include "khub/variants/resolve.h"

#include <gtest/gtest.h>

#include "test_hosts.h"

namespace khub::variants {
namespace {

const std::vector<std::string> kSetR = {
    "torch210-cxx11-cu128-x86_64-linux", "torch210-cxx11-cu126-x86_64-linux", "torch210-cxx11-cu130-x86_64-linux",
    "torch210-cxx11-rocm70-x86_64-linux", "torch210-cxx11-cpu-x86_64-linux",  "torch210-cpu-aarch64-darwin",
    "torch210-metal-aarch64-darwin",      "torch-cuda",                         "torch-cpu"};

const std::vector<std::string> kSetM = {
    "torch-stable-abi29-cu126-x86_64-linux", "torch-stable-abi211-cu128-x86_64-linux",
    "torch-stable-abi211-cu126-x86_64-linux", "torch212-cxx11-cu128-x86_64-linux",
    "torch212-cu130-x86_64-linux",            "torch212-cu126-x86_64-linux",
    "tvm-ffi01-cu128-x86_64-linux",           "tvm-ffi01-cu130-x86_64-linux",
    "torch-cuda",                             "torch-universal"};

std::vector<std::string> accepted(const std::vector<std::string>& names, const HostInfo& host) {
  Resolution r = resolve_variants(names, host);
  // Upstream's invariant for every case: the accepted list is the accepted entries of the trace,
  // and the trace covers every input.
  EXPECT_EQ(r.decisions.size(), names.size());
  std::vector<std::string> from_trace;
  for (const Decision& d : r.decisions) {
    if (d.accepted) from_trace.push_back(d.name);
  }
  EXPECT_EQ(r.accepted(), from_trace);
  EXPECT_EQ(r.chosen() ? r.chosen()->name : "", from_trace.empty() ? "" : from_trace.front());
  return r.accepted();
}

using Names = std::vector<std::string>;

TEST(ResolveSetR, LinuxCudaHosts) {
  const Names cu = {"torch210-cxx11-cu128-x86_64-linux", "torch210-cxx11-cu126-x86_64-linux", "torch-cuda"};
  EXPECT_EQ(accepted(kSetR, linux_host({2, 10}, cuda(12, 8))), cu);
  EXPECT_EQ(accepted(kSetR, linux_host({2, 10}, cuda(12, 9))), cu);
  EXPECT_EQ(accepted(kSetR, linux_host({2, 10}, cuda(12, 5))), Names{"torch-cuda"});
  EXPECT_EQ(accepted(kSetR, linux_host({2, 10}, cuda(11, 8))), Names{"torch-cuda"});
  EXPECT_EQ(accepted(kSetR, linux_host({2, 10}, cuda(13, 2))),
            (Names{"torch210-cxx11-cu130-x86_64-linux", "torch-cuda"}));
  EXPECT_EQ(accepted(kSetR, linux_host({2, 9}, cuda(12, 8))), Names{"torch-cuda"});
  EXPECT_EQ(accepted(kSetR, linux_host({2, 10}, cuda(12, 8), "aarch64")), Names{"torch-cuda"});
  EXPECT_EQ(accepted(kSetR, linux_host(std::nullopt, cuda(12, 8))), Names{"torch-cuda"});
}

TEST(ResolveSetR, LinuxRocmAndCpuHosts) {
  EXPECT_EQ(accepted(kSetR, linux_host({2, 10}, rocm(7, 0))), Names{"torch210-cxx11-rocm70-x86_64-linux"});
  EXPECT_EQ(accepted(kSetR, linux_host({2, 10}, rocm(7, 1))), Names{});
  EXPECT_EQ(accepted(kSetR, linux_host({2, 10}, cpu())), (Names{"torch210-cxx11-cpu-x86_64-linux", "torch-cpu"}));
}

TEST(ResolveSetR, DarwinHosts) {
  EXPECT_EQ(accepted(kSetR, darwin_host(cpu(), Version{15, 7})), (Names{"torch210-cpu-aarch64-darwin", "torch-cpu"}));
  EXPECT_EQ(accepted(kSetR, darwin_host(metal(), Version{26, 1})), Names{"torch210-metal-aarch64-darwin"});
  EXPECT_EQ(accepted(kSetR, darwin_host(metal(), Version{15, 7})), Names{});
  Names with_noarch = kSetR;
  with_noarch.push_back("torch-metal");
  EXPECT_EQ(accepted(with_noarch, darwin_host(metal(), Version{15, 7})), Names{"torch-metal"});
  EXPECT_EQ(accepted(with_noarch, darwin_host(metal(), std::nullopt)), Names{"torch-metal"});
}

TEST(ResolveSetR, MetalRejectionNamesMacosVersion) {
  for (auto macos : {std::optional<Version>{Version{15, 7}}, std::optional<Version>{}}) {
    Resolution r = resolve_variants({"torch210-metal-aarch64-darwin", "torch-metal"}, darwin_host(metal(), macos));
    ASSERT_EQ(r.chosen()->name, "torch-metal");
    const std::string expected = "Metal kernels require macOS 26.0 or later, system macOS version is " +
                                 (macos ? macos->str() : std::string("None"));
    EXPECT_EQ(r.decisions[1].reason, expected);
    EXPECT_NE(r.decisions[1].reason.find("require macOS 26.0"), std::string::npos);
  }
}

TEST(ResolveSetR, FullTrace) {
  Resolution r = resolve_variants(kSetR, linux_host({2, 10}, cuda(12, 8)));
  EXPECT_EQ(r.trace(),
            "torch210-cxx11-cu128-x86_64-linux compatible, preferred \u2705\n"
            "torch210-cxx11-cu126-x86_64-linux compatible \u2705\n"
            "torch-cuda compatible \u2705\n"
            "torch210-cpu-aarch64-darwin: CPU (aarch64) does not match system CPU (x86_64)\n"
            "torch210-metal-aarch64-darwin: CPU (aarch64) does not match system CPU (x86_64)\n"
            "torch210-cxx11-cpu-x86_64-linux: backend (cpu) does not match selected backend (cu128)\n"
            "torch210-cxx11-cu130-x86_64-linux: CUDA version (13.0) is not compatible with system CUDA version (12.8)\n"
            "torch210-cxx11-rocm70-x86_64-linux: backend (rocm70) does not match selected backend (cu128)\n"
            "torch-cpu: backend (cpu) does not match system backend (cuda) and is not universal");
}

TEST(ResolveSetM, StableAbiTorchTvmFfi) {
  HostInfo h130 = linux_host({2, 12}, cuda(13, 0));
  h130.tvm_ffi = Version{0, 1};
  EXPECT_EQ(accepted(kSetM, h130), (Names{"torch212-cu130-x86_64-linux", "tvm-ffi01-cu130-x86_64-linux",
                                          "torch-cuda", "torch-universal"}));
  HostInfo h128 = linux_host({2, 12}, cuda(12, 8));
  h128.tvm_ffi = Version{0, 1};
  EXPECT_EQ(accepted(kSetM, h128),
            (Names{"torch-stable-abi211-cu128-x86_64-linux", "torch-stable-abi211-cu126-x86_64-linux",
                   "torch-stable-abi29-cu126-x86_64-linux", "torch212-cu126-x86_64-linux",
                   "torch212-cxx11-cu128-x86_64-linux", "tvm-ffi01-cu128-x86_64-linux", "torch-cuda",
                   "torch-universal"}));
  EXPECT_EQ(accepted(kSetM, linux_host({2, 10}, cuda(12, 8))),
            (Names{"torch-stable-abi29-cu126-x86_64-linux", "torch-cuda", "torch-universal"}));
}

TEST(ResolveOthers, XpuCannWindowsOldAbi) {
  const Names xpu = {"torch212-cxx11-xpu20253-x86_64-linux", "torch213-cxx11-xpu20260-x86_64-linux", "torch-xpu"};
  EXPECT_EQ(accepted(xpu, linux_host({2, 12}, backend(BackendKind::Xpu, 2025, 3))),
            (Names{"torch212-cxx11-xpu20253-x86_64-linux", "torch-xpu"}));
  EXPECT_EQ(accepted(xpu, linux_host({2, 12}, backend(BackendKind::Xpu, 2026, 0))), Names{"torch-xpu"});

  const Names cann = {"torch210-cxx11-cann83-aarch64-linux", "torch-npu", "torch-cpu", "torch-universal"};
  EXPECT_EQ(accepted(cann, linux_host({2, 10}, backend(BackendKind::Cann, 8, 3), "aarch64")),
            (Names{"torch210-cxx11-cann83-aarch64-linux", "torch-npu", "torch-universal"}));

  HostInfo windows = linux_host({2, 10}, cuda(12, 8));
  windows.os = "windows";
  windows.cxx11_abi = std::nullopt;
  EXPECT_EQ(accepted({"torch210-cu128-x86_64-windows", "torch210-cxx11-cu128-x86_64-windows",
                      "torch210-cpu-x86_64-windows"},
                     windows),
            Names{"torch210-cu128-x86_64-windows"});

  HostInfo old_abi = linux_host({2, 10}, cuda(12, 6));
  old_abi.cxx11_abi = false;
  Resolution r = resolve_variants({"torch210-cxx98-cu126-x86_64-linux", "torch210-cxx11-cu126-x86_64-linux",
                                   "torch210-cu126-x86_64-linux"},
                                  old_abi);
  EXPECT_EQ(r.accepted(), (Names{"torch210-cu126-x86_64-linux", "torch210-cxx98-cu126-x86_64-linux"}));
  EXPECT_EQ(r.decisions.back().reason, "Torch CXX11 ABI (True) does not match environment Torch CXX11 ABI (False)");
}

TEST(ResolveUpstreamCases, RocmUniversalAndCudaOnlySets) {
  EXPECT_EQ(accepted({"torch29-cxx11-rocm70-x86_64-linux"}, linux_host({2, 9}, rocm(7, 0))),
            Names{"torch29-cxx11-rocm70-x86_64-linux"});
  EXPECT_EQ(accepted({"torch210-cxx11-rocm70-x86_64-linux"}, linux_host({2, 9}, rocm(7, 0))), Names{});
  EXPECT_EQ(accepted(kSetR, linux_host({2, 9}, rocm(7, 0))), Names{});
  EXPECT_EQ(accepted({"torch-universal"}, linux_host({2, 10}, rocm(7, 0))), Names{"torch-universal"});
  const Names cuda_only = {"torch210-cxx11-cu126-x86_64-linux", "torch210-cxx11-cu128-x86_64-linux",
                           "torch210-cxx11-cu130-x86_64-linux"};
  EXPECT_EQ(accepted(cuda_only, linux_host({2, 10}, cuda(12, 5))), Names{});
  EXPECT_EQ(accepted(cuda_only, linux_host({2, 10}, cuda(11, 8))), Names{});
}

TEST(ResolveUpstreamCases, StableAbiVersionBound) {
  const Names abi = {"torch-stable-abi211-cu128-x86_64-linux"};
  EXPECT_EQ(accepted(abi, linux_host({2, 11}, cuda(12, 8))), abi);
  EXPECT_EQ(accepted(abi, linux_host({2, 12}, cuda(12, 8))), abi);
  Resolution r = resolve_variants(abi, linux_host({2, 10}, cuda(12, 8)));
  EXPECT_EQ(r.decisions[0].reason, "Torch stable ABI version (2.11) is too new for environment Torch version (2.10)");
  r = resolve_variants(abi, linux_host(std::nullopt, cuda(12, 8)));
  EXPECT_EQ(r.decisions[0].reason, "Torch stable ABI version (2.11) is too new for environment Torch version (None)");
}

TEST(Rejections, ExactTexts) {
  HostInfo h = linux_host({2, 10}, cuda(12, 8));
  auto reason = [&](const char* name) { return rejection_reason(*parse_variant(name), h); };
  EXPECT_EQ(reason("torch210-cxx11-cu128-x86_64-darwin"), "OS (darwin) does not match system OS (linux)");
  EXPECT_EQ(reason("torch29-cxx11-cu128-x86_64-linux"),
            "Torch version (2.9) does not match environment Torch version (2.10)");
  EXPECT_EQ(reason("tvm-ffi01-cu128-x86_64-linux"),
            "tvm-ffi version (0.1) does not match environment tvm-ffi version (None)");
  EXPECT_EQ(reason("torch-rocm"), "backend (rocm) does not match system backend (cuda) and is not universal");
  EXPECT_EQ(reason("torch210-cxx11-cu128-x86_64-linux"), "");
  h.torch.reset();
  h.cxx11_abi.reset();
  EXPECT_EQ(reason("torch210-cxx11-cu128-x86_64-linux"),
            "Torch version (2.10) does not match environment Torch version (None)");
}

TEST(Ranking, TieBreakIsArchFirstThenName) {
  HostInfo h = linux_host({2, 12}, cpu());
  h.tvm_ffi = Version{0, 1};
  // tvm-ffi01-cpu and torch-cpu share upstream's key (0, 2, 0, 0, 0).
  for (const Names& order : {Names{"torch-cpu", "tvm-ffi01-cpu-x86_64-linux"}, Names{"tvm-ffi01-cpu-x86_64-linux", "torch-cpu"}}) {
    Resolution r = resolve_variants(order, h);
    EXPECT_EQ(sort_key(r.decisions[0]), sort_key(r.decisions[1]));
    EXPECT_EQ(r.accepted(), (Names{"tvm-ffi01-cpu-x86_64-linux", "torch-cpu"}));
  }
  // Rejected entries with equal keys come out by name.
  Resolution r = resolve_variants({"torch-xpu", "torch-rocm", "torch-metal"}, h);
  EXPECT_EQ(r.trace(),
            "torch-metal: backend (metal) does not match system backend (cpu) and is not universal\n"
            "torch-rocm: backend (rocm) does not match system backend (cpu) and is not universal\n"
            "torch-xpu: backend (xpu) does not match system backend (cpu) and is not universal");
}

TEST(Ranking, SortKeysMatchTheSpecTable) {
  auto key = [](const char* name, bool ok) { return sort_key(Decision{*parse_variant(name), name, ok, {}}); };
  EXPECT_EQ(key("torch-stable-abi211-cu128-x86_64-linux", true), (std::array<int, 5>{0, 0, -2, -11, -8}));
  EXPECT_EQ(key("torch212-cxx11-cu126-x86_64-linux", true), (std::array<int, 5>{0, 1, 0, 1, -6}));
  EXPECT_EQ(key("torch212-cu126-x86_64-linux", false), (std::array<int, 5>{1, 1, 0, 0, -6}));
  EXPECT_EQ(key("tvm-ffi01-xpu20253-x86_64-linux", true), (std::array<int, 5>{0, 2, 0, 0, -3}));
  EXPECT_EQ(key("torch212-metal-aarch64-darwin", true), (std::array<int, 5>{0, 1, 0, 0, 0}));
  EXPECT_EQ(key("torch-cuda", true), (std::array<int, 5>{0, 2, 0, 0, 0}));
  EXPECT_EQ(key("torch-universal", true), (std::array<int, 5>{0, 2, 0, 0, 1}));
}

TEST(Resolve, UnparsableAndDuplicateNames) {
  std::vector<std::string> bad;
  Resolution r = resolve_variants({"torch-cpu", "garbage", "torch-cpu", "torch2-cpu-x86_64-linux"},
                                  linux_host({2, 10}, cpu()), &bad);
  EXPECT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(bad, (Names{"garbage", "torch2-cpu-x86_64-linux"}));
}

TEST(Resolve, EmptyInputHasNoChoiceAndEmptyTrace) {
  Resolution r = resolve_variants({}, linux_host({2, 10}, cpu()));
  EXPECT_EQ(r.chosen(), nullptr);
  EXPECT_EQ(r.trace(), "");
  EXPECT_EQ(first_loadable(r), nullptr);
}

TEST(Resolve, FirstLoadableSkipsNoarchAndTvmFfi) {
  HostInfo h = linux_host({2, 12}, cuda(13, 0));
  h.tvm_ffi = Version{0, 1};
  Resolution r = resolve_variants({"tvm-ffi01-cu130-x86_64-linux", "torch-cuda"}, h);
  EXPECT_EQ(first_loadable(r), nullptr);
  r = resolve_variants(kSetM, h);
  ASSERT_NE(first_loadable(r), nullptr);
  EXPECT_EQ(first_loadable(r)->name, "torch212-cu130-x86_64-linux");
}

TEST(Resolve, ChooseLoadableExplainsFailures) {
  const Resolution r = resolve_variants(kSetR, linux_host({2, 10}, cuda(12, 8)));
  Expected<const Decision*> ok = choose_loadable(r, "r");  // points into r
  ASSERT_TRUE(ok);
  EXPECT_EQ((*ok)->name, "torch210-cxx11-cu128-x86_64-linux");

  Expected<const Decision*> none =
      choose_loadable(resolve_variants(kSetR, linux_host({2, 10}, rocm(7, 1))), "org/k (revision: v1)");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::NoVariant);
  EXPECT_EQ(none.error().message, "Cannot find a build variant for this system in org/k (revision: v1)");
  ASSERT_EQ(none.error().notes.size(), kSetR.size());
  EXPECT_EQ(none.error().notes[0], "torch210-cpu-aarch64-darwin: CPU (aarch64) does not match system CPU (x86_64)");

  Expected<const Decision*> python_only =
      choose_loadable(resolve_variants(kSetR, linux_host(std::nullopt, cuda(12, 8))), "org/k (revision: v1)");
  ASSERT_FALSE(python_only);
  EXPECT_EQ(python_only.error().message, "no variant in org/k (revision: v1) loads without Python: accepted torch-cuda");
  EXPECT_EQ(python_only.error().notes[0], "torch-cuda compatible, preferred \u2705");
  EXPECT_FALSE(python_only.error().hint.empty());
}

}  // namespace
}  // namespace khub::variants
