#include "khub/publish/abi_check.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace khub::publish {
namespace {

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(AbiCheck, CleanModulePasses) {
  auto elf = read_elf(KHUB_FIXTURE_ABI_CLEAN);
  ASSERT_TRUE(elf) << elf.error().message;
  EXPECT_EQ(elf->machine, "x86_64");
  auto ml = check_manylinux(*elf);
  ASSERT_TRUE(ml);
  EXPECT_TRUE(ml->empty());
  EXPECT_TRUE(check_abi3(*elf).empty());
  EXPECT_TRUE(disallowed_libraries(*elf).empty());
}

TEST(AbiCheck, DirtyModuleFindings) {
  auto elf = read_elf(KHUB_FIXTURE_ABI_DIRTY);
  ASSERT_TRUE(elf) << elf.error().message;
  auto ml = check_manylinux(*elf);
  ASSERT_TRUE(ml);
  EXPECT_NE(std::find(ml->begin(), ml->end(), ManylinuxViolation{"pthread_create", "GLIBC", "2.34"}), ml->end());
  auto abi3 = check_abi3(*elf);
  EXPECT_NE(std::find(abi3.begin(), abi3.end(), Abi3Violation{"PyAIter_Check", "3.10"}), abi3.end());
  EXPECT_NE(std::find(abi3.begin(), abi3.end(), Abi3Violation{"PyCode_NewEmpty", std::nullopt}), abi3.end());
  for (const auto& v : abi3) EXPECT_NE(v.symbol, "PyModule_Create2");
  EXPECT_EQ(check_abi3(*elf, 3, 12).size(), 1u);  // only the non-ABI symbol remains
  auto libs = disallowed_libraries(*elf);
  EXPECT_TRUE(has(libs, "libcrypto.so.3")) << libs.size();
  EXPECT_FALSE(check_manylinux(*elf, "manylinux_2_17"));
}

TEST(AbiCheck, NamespacesFromTorchLibrarySymbols) {
  auto good = read_elf(KHUB_FIXTURE_NS_GOOD);
  ASSERT_TRUE(good);
  EXPECT_EQ(torch_library_namespaces(*good), std::vector<std::string>{"_relu_cuda_abc1234"});
  EXPECT_EQ(python_module_names(*good), std::vector<std::string>{"_relu_cuda_abc1234"});
  auto bad = read_elf(KHUB_FIXTURE_NS_BAD);
  ASSERT_TRUE(bad);
  EXPECT_EQ(torch_library_namespaces(*bad), std::vector<std::string>{"_other_cuda_0000000"});
}

TEST(AbiCheck, TorchStableAbiInternals) {
  auto elf = read_elf(KHUB_FIXTURE_STABLE_ABI);
  ASSERT_TRUE(elf);
  const std::string internal = "c10::detail::torchCheckFail(char const*, char const*, unsigned int, char const*)";
  auto sorted = [](std::vector<TorchStableAbiViolation> v) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.symbol < b.symbol; });
    return v;
  };
  // Target 2.10: torch_call_dispatcher (2.10) is allowed, torch_library_def_with_tags (2.12) is not.
  EXPECT_EQ(sorted(check_torch_stable_abi(*elf, 2, 10)),
            (std::vector<TorchStableAbiViolation>{{internal, std::nullopt, "2.10"},
                                                  {"torch_library_def_with_tags", "2.12", "2.10"}}));
  EXPECT_EQ(check_torch_stable_abi(*elf, 2, 12), (std::vector<TorchStableAbiViolation>{{internal, std::nullopt, "2.12"}}));
  EXPECT_EQ(check_torch_stable_abi(*elf, 2, 9).size(), 3u);
  auto clean = read_elf(KHUB_FIXTURE_NS_GOOD);
  ASSERT_TRUE(clean);
  EXPECT_TRUE(check_torch_stable_abi(*clean, 2, 10).empty());
}

TEST(AbiCheck, TorchShimVersionTable) {
  EXPECT_EQ(torch_shim_added("torch_call_dispatcher"), "2.10");
  EXPECT_EQ(torch_shim_added("torch_from_blob"), "2.11");
  EXPECT_EQ(torch_shim_added("torch_library_def_with_tags"), "2.12");
  EXPECT_FALSE(torch_shim_added("aoti_torch_get_data_ptr"));  // before 2.10
  EXPECT_EQ(TorchStableAbiViolation({"torch_from_blob", "2.11", "2.10"}).describe(),
            "uses torch_from_blob, added to torch's C shim in 2.11, after the stable-ABI target 2.10");
}

TEST(AbiCheck, StableAbiTable) {
  EXPECT_EQ(stable_abi_added("PyModule_Create2"), "3.2");
  EXPECT_EQ(stable_abi_added("PyAIter_Check"), "3.10");
  EXPECT_FALSE(stable_abi_added("PyCode_NewEmpty"));
  EXPECT_EQ(Abi3Violation({"PyCode_NewEmpty", std::nullopt}).describe(), "Non-ABI3 symbol: PyCode_NewEmpty");
}

TEST(AbiCheck, NonElfIsUnsupported) {
  auto text = read_elf(__FILE__);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, "Unsupported file format");
  EXPECT_EQ(read_elf("/nonexistent.so").error().code, ErrorCode::Io);
}

}  // namespace
}  // namespace khub::publish
