// Oracle: kernel-abi-check (kernel-builder's ABI checker, Python binding) must report the same
// manylinux_2_28 and abi3-3.9 findings as khub on deliberately non-compliant and clean modules.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "../protocol/python_oracle.h"
#include "khub/publish/abi_check.h"

namespace khub::publish {
namespace {

std::set<std::string> oracle_findings(const std::string& path) {
  auto r = khub::testing::run_python(
      "import kernel_abi_check as k\n"
      "o = k.ObjectFile(r'" + path + "')\n"
      "for v in o.check_manylinux('manylinux_2_28'): print('manylinux', v.name, v.dep, v.version)\n"
      "for v in o.check_python_abi('3.9'):\n"
      "    print('abi3', v.name, getattr(v, 'version_added', '-'))\n");
  EXPECT_EQ(r.status, 0) << path;
  std::set<std::string> out;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) out.insert(line);
  return out;
}

std::set<std::string> khub_findings(const std::string& path) {
  auto elf = read_elf(path);
  EXPECT_TRUE(elf) << path;
  std::set<std::string> out;
  if (!elf) return out;
  auto manylinux = check_manylinux(*elf);
  EXPECT_TRUE(manylinux);
  for (const auto& v : manylinux.value()) out.insert("manylinux " + v.symbol + " " + v.dep + " " + v.version);
  for (const auto& v : check_abi3(*elf)) out.insert("abi3 " + v.symbol + " " + v.added.value_or("-"));
  return out;
}

class AbiOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!khub::testing::python_has("kernel_abi_check")) GTEST_SKIP() << "kernel_abi_check not importable";
  }
};

TEST_F(AbiOracle, DirtyModuleSameFindings) {
  auto mine = khub_findings(KHUB_FIXTURE_ABI_DIRTY);
  EXPECT_TRUE(mine.contains("manylinux pthread_create GLIBC 2.34"));
  EXPECT_TRUE(mine.contains("abi3 PyAIter_Check 3.10"));
  EXPECT_TRUE(mine.contains("abi3 PyCode_NewEmpty -"));
  EXPECT_EQ(mine, oracle_findings(KHUB_FIXTURE_ABI_DIRTY));
}

TEST_F(AbiOracle, CleanModuleSameFindings) {
  EXPECT_TRUE(khub_findings(KHUB_FIXTURE_ABI_CLEAN).empty());
  EXPECT_TRUE(oracle_findings(KHUB_FIXTURE_ABI_CLEAN).empty());
}

// kernel-abi-check takes symbols from .symtab, so a stripped module passes it vacuously
// (inferred). khub reads .dynsym with its GNU version tables, which stripping
// keeps: the same findings as for the unstripped module. This is a deliberate difference.
TEST_F(AbiOracle, StrippedModuleKhubStillFinds) {
  EXPECT_TRUE(oracle_findings(KHUB_FIXTURE_ABI_DIRTY_STRIPPED).empty());
  EXPECT_EQ(khub_findings(KHUB_FIXTURE_ABI_DIRTY_STRIPPED), khub_findings(KHUB_FIXTURE_ABI_DIRTY));
}

}  // namespace
}  // namespace khub::publish
