// khub::kernel with stable-ABI variants (torch-stable-abi<MM>): the bundled rmsnorm's stable CPU build
// is chosen and loaded like a torch build, its ops called typed and boxed through the dispatcher,
// its std::runtime_error failures surfaced as c10::Error, and a variant needing a C-shim function
// this torch lacks fails saying the host torch is older than the variant needs.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "khub/base/fs.h"
#include "khub/kernel.h"
#include "test_util.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;
using RmsSig = at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double);

const fs::path kRmsnormBuild = fs::path(KHUB_KERNELS_DIR) / "rmsnorm" / "build";

// This host's stable-ABI variant name for target 2.10 and `backend`.
std::string stable_variant(const std::string& backend) {
  const auto& h = current_host();
  return "torch-stable-abi210-" + backend + "-" + h.cpu + "-" + h.os;
}

at::Tensor reference(const at::Tensor& x, const at::Tensor& w, double eps) {
  const auto xd = x.to(at::kDouble);
  return xd * at::rsqrt(xd.pow(2).mean(-1, true) + eps) * w.to(at::kDouble);
}

TEST(StableKernel, LocalBuildLoadsTheStableVariant) {
  auto k = get_local_kernel(kRmsnormBuild, "cpu");
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->variant(), stable_variant("cpu"));  // ranked before torch212-cxx11-cpu, as in Python
  EXPECT_NE(k->id().find("_stable_"), std::string::npos) << k->id();
  EXPECT_EQ(k->ops(), (std::vector<std::string>{"fused_add_rms_norm", "rms_norm", "rms_norm_rounding"}));
  auto op = k->op("rms_norm");
  ASSERT_TRUE(op) << op.error().describe();
  const auto x = at::randn({8, 256});
  const auto w = at::rand({256});
  const auto typed = op->typed<RmsSig>().call(x, w, 1e-6);
  EXPECT_TRUE(at::allclose(typed.to(at::kDouble), reference(x, w, 1e-6), 1e-5, 1e-6));
  const auto boxed = op->call_boxed({x, w, 1e-6});
  ASSERT_EQ(boxed.size(), 1u);
  EXPECT_TRUE(at::equal(boxed[0].toTensor(), typed));
  auto add = k->op("fused_add_rms_norm");
  ASSERT_TRUE(add);
  const auto both = add->call_boxed({x, x, c10::IValue(), 1e-6});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_TRUE(at::equal(both[1].toTensor(), x + x));
}

// STD_TORCH_CHECK throws std::runtime_error through the dispatcher; khub's Op hands it on as c10::Error
// with the same text, typed and boxed, so callers catch one type whichever ABI the variant has.
TEST(StableKernel, KernelErrorsArriveAsC10Error) {
  auto k = get_local_kernel(kRmsnormBuild, "cpu");
  ASSERT_TRUE(k) << k.error().describe();
  auto op = k->op("rms_norm");
  ASSERT_TRUE(op);
  const auto ints = at::ones({2, 8}, at::kInt);
  const std::string needle = "x: unsupported dtype Int (expected float32, float16 or bfloat16)";
  try {
    op->typed<RmsSig>().call(ints, std::nullopt, 1e-6);
    ADD_FAILURE() << "typed call did not throw";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find(needle), std::string::npos) << e.what_without_backtrace();
  }
  try {
    (void)op->call_boxed({ints, c10::IValue(), 1e-6});
    ADD_FAILURE() << "boxed call did not throw";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find(needle), std::string::npos) << e.what_without_backtrace();
  }
  // The dispatcher's own handle passes the kernel's exception through unchanged.
  EXPECT_THROW(op->typed<RmsSig>().handle().call(ints, std::nullopt, 1e-6), std::runtime_error);
  try {
    op->typed<RmsSig>().handle().call(ints, std::nullopt, 1e-6);
  } catch (const c10::Error&) {
    ADD_FAILURE() << "the raw handle should not convert";
  } catch (const std::runtime_error&) {
  }
}

// A stable-ABI variant whose module calls torch_exception_get_what (added to the C shim in torch 2.13)
// cannot load into torch 2.12: the error says so and keeps dlerror's text.
TEST(StableKernel, VariantNeedingANewerTorchFailsClearly) {
  test::TempDir dir;
  const std::string id = "_khub_plain_newer_4444444";
  const fs::path vdir = dir.path() / "build" / stable_variant("cpu");
  ASSERT_TRUE(write_file_atomic(vdir / (id + ".abi3.so"), test::slurp(fs::path(KHUB_NEWER_TORCH_MODULE))));
  ASSERT_TRUE(write_file_atomic(vdir / "__init__.py", "from ._ops import ops\n"));
  ASSERT_TRUE(write_file_atomic(vdir / "metadata.json",
                                "{\"name\":\"newer\",\"id\":\"" + id +
                                    "\",\"version\":1,\"license\":\"Apache-2.0\",\"python-depends\":[],"
                                    "\"backend\":{\"type\":\"cpu\"}}"));
  auto k = get_local_kernel(dir.path(), "cpu");
  ASSERT_FALSE(k);
  const Error& e = k.error();
  EXPECT_EQ(e.code, ErrorCode::LoadFailed);
  EXPECT_NE(e.message.find("the host torch is older than the variant needs"), std::string::npos) << e.describe();
  EXPECT_NE(e.message.find("torch_exception_get_what"), std::string::npos) << e.describe();
  const std::string all = e.describe();
  EXPECT_NE(all.find("dlerror: "), std::string::npos) << all;
  EXPECT_NE(all.find("undefined symbol: torch_exception_get_what"), std::string::npos) << all;
  EXPECT_NE(all.find("host torch " + current_host().torch->str() + "; variant " + stable_variant("cpu")),
            std::string::npos)
      << all;
}

}  // namespace
