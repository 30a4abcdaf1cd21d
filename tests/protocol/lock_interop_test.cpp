// Oracle: kernels' `KernelLocks` (Rust kernels-data behind the `kernels` package) must write the same
// bytes as khub for the same locks and accept / reject the same files.
#include <gtest/gtest.h>

#include "khub/protocol/lock.h"
#include "python_oracle.h"

namespace khub::protocol {
namespace {

class KernelLocksOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!khub::testing::python_has("kernels._rust")) GTEST_SKIP() << "kernels._rust not importable";
  }
};

TEST_F(KernelLocksOracle, SameBytesSameVerdicts) {
  const std::string c1(40, 'a'), c2 = std::string(40, 'b');
  std::vector<KernelLock> locks = {{"z-org/k", std::nullopt, "main", c1, std::nullopt},
                                   {"a-org/k", 2, std::nullopt, c2, std::nullopt},
                                   {"a-org/k", std::nullopt, "dev", c1, std::nullopt},
                                   {"a-org/k", 1, std::nullopt, c1, std::nullopt}};
  auto mine = serialize_kernel_locks(locks);
  ASSERT_TRUE(mine);
  auto r = khub::testing::run_python(
      "from kernels._rust import KernelDependency, KernelLock, KernelLocks, KernelVersion as V\n"
      "locks = KernelLocks({\n"
      "  KernelDependency('z-org/k', V.Revision('main')): KernelLock('" + c1 + "'),\n"
      "  KernelDependency('a-org/k', V.Version(2)): KernelLock('" + c2 + "'),\n"
      "  KernelDependency('a-org/k', V.Revision('dev')): KernelLock('" + c1 + "'),\n"
      "  KernelDependency('a-org/k', V.Version(1)): KernelLock('" + c1 + "')})\n"
      "import sys; sys.stdout.write(locks.to_json())\n");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.output, *mine);

  const std::vector<std::string> files = {
      *mine,
      R"([{"dependency":{"repo-id":"a/b","version":1},"lock":{"commit":"abc"}}])",
      R"([{"dependency":{"repo-id":"a/b","version":1,"x":2},"lock":{"commit":")" + c1 + "\"}}]",
      R"([{"dependency":{"repo-id":"a/b","version":1},"lock":{"commit":")" + c1 + "\"},\"x\":1}]",
      "[" + std::string(R"({"dependency":{"repo-id":"a/b","version":1},"lock":{"commit":")") + c1 + "\"}}," +
          R"({"dependency":{"repo-id":"a/b","version":1},"lock":{"commit":")" + c1 + "\"}}]",
      "[]",
  };
  for (const auto& f : files) {
    auto check = khub::testing::run_python(
        "from kernels._rust import KernelLocks\ntry:\n  KernelLocks.from_json(r'''" + f +
        "''')\n  print('ok')\nexcept ValueError:\n  print('err')\n");
    ASSERT_EQ(check.status, 0);
    EXPECT_EQ(check.output, parse_lock_file(f) ? "ok\n" : "err\n") << f;
  }
}

}  // namespace
}  // namespace khub::protocol
