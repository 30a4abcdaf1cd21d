// The stable-ABI builds (torch-stable-abi<MM>) against the torch builds of the same kernels: one
// torch-free implementation behind two bindings, so every op gives the same bits, and a stable
// cuda variant serves CPU tensors like the torch one. (The full suite also runs on the stable
// builds: ctest kernels_test.stable_abi.)
#include <tuple>

#include "kernel_test_support.h"

namespace khub_test {
namespace {

using OptT = std::optional<at::Tensor>;
using Pair = std::tuple<at::Tensor, at::Tensor>;

#if defined(KHUB_VARIANT_RMSNORM_STABLE) && defined(KHUB_VARIANT_ROPE3D_STABLE) && \
    defined(KHUB_VARIANT_GEGLU_STABLE) && defined(KHUB_VARIANT_ADALN_STABLE)

// The op `name` of both builds of a kernel.
template <typename Sig>
std::pair<c10::TypedOperatorHandle<Sig>, c10::TypedOperatorHandle<Sig>> both(const char* torch_dir,
                                                                           const char* stable_dir, const char* name) {
  return {op<Sig>(load_variant(torch_dir), name), op<Sig>(load_variant(stable_dir), name)};
}

void expect_same(const std::vector<at::Tensor>& torch_out, const std::vector<at::Tensor>& stable_out,
                 const std::string& what) {
  ASSERT_EQ(torch_out.size(), stable_out.size());
  for (size_t i = 0; i < torch_out.size(); ++i) {
    EXPECT_EQ(stable_out[i].sizes(), torch_out[i].sizes()) << what << " output " << i;
    EXPECT_TRUE(stable_out[i].is_contiguous()) << what << " output " << i;
    EXPECT_TRUE(at::equal(stable_out[i], torch_out[i])) << what << " output " << i << " differs";
  }
}

TEST(StableAbi, OpsMatchTheTorchBuildBitForBit) {
  for (const auto dtype : kDtypes) {
    SCOPED_TRACE(c10::toString(dtype));
    // Rows split across threads (> 64K elements), a strided input, an fp32 weight.
    const auto x = make_input({2, 96, 1024}, dtype, Layout::RowStrided);
    const auto w = make_input({1024}, at::kFloat);
    auto [rms_t, rms_s] = both<at::Tensor(const at::Tensor&, const OptT&, double)>(
        KHUB_VARIANT_RMSNORM, KHUB_VARIANT_RMSNORM_STABLE, "rms_norm");
    expect_same({rms_t.call(x, w, 1e-6)}, {rms_s.call(x, w, 1e-6)}, "rms_norm");
    auto [round_t, round_s] = both<at::Tensor(const at::Tensor&, const OptT&, double, c10::string_view)>(
        KHUB_VARIANT_RMSNORM, KHUB_VARIANT_RMSNORM_STABLE, "rms_norm_rounding");
    expect_same({round_t.call(x, std::nullopt, 1e-6, "qwen3")}, {round_s.call(x, std::nullopt, 1e-6, "qwen3")},
                "rms_norm_rounding");
    auto [add_t, add_s] = both<Pair(const at::Tensor&, const at::Tensor&, const OptT&, double)>(
        KHUB_VARIANT_RMSNORM, KHUB_VARIANT_RMSNORM_STABLE, "fused_add_rms_norm");
    const auto [a0, a1] = add_t.call(x, x.flip(0), w, 1e-6);
    const auto [b0, b1] = add_s.call(x, x.flip(0), w, 1e-6);
    expect_same({a0, a1}, {b0, b1}, "fused_add_rms_norm");

    auto [geglu_t, geglu_s] =
        both<at::Tensor(const at::Tensor&, bool)>(KHUB_VARIANT_GEGLU, KHUB_VARIANT_GEGLU_STABLE, "geglu");
    expect_same({geglu_t.call(x, false), geglu_t.call(x, true)}, {geglu_s.call(x, false), geglu_s.call(x, true)},
                "geglu");

    const auto table = make_input({6, 1024}, dtype, Layout::Contiguous, 0.1);
    const auto temb = make_input({2, 1, 6 * 1024}, dtype, Layout::Contiguous, 0.1);
    auto [ada_t, ada_s] = both<Pair(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                    int64_t, int64_t, double)>(KHUB_VARIANT_ADALN, KHUB_VARIANT_ADALN_STABLE,
                                                               "gated_residual_adaln_rms_table");
    const auto [c0, c1] = ada_t.call(x, x.flip(1), table, temb, 2, 0, 1e-6);
    const auto [d0, d1] = ada_s.call(x, x.flip(1), table, temb, 2, 0, 1e-6);
    expect_same({c0, c1}, {d0, d1}, "gated_residual_adaln_rms_table");

    // RoPE: tables from each build (bit-identical to diffusers' ops in both), then the fused norm + RoPE.
    auto [tab_t, tab_s] = both<Pair(const at::Tensor&, int64_t, double)>(KHUB_VARIANT_ROPE3D,
                                                                         KHUB_VARIANT_ROPE3D_STABLE, "ltx_rope_tables");
    const auto pos = at::rand({9}, at::TensorOptions().device(test_device()));
    const auto [cos_t, sin_t] = tab_t.call(pos, 96, 10000.0);
    const auto [cos_s, sin_s] = tab_s.call(pos, 96, 10000.0);
    expect_same({cos_t, sin_t}, {cos_s, sin_s}, "ltx_rope_tables");
    const auto q = make_input({2, 96, 96}, dtype);
    const auto index = at::randint(0, 9, {1, 96, 3}, at::TensorOptions().dtype(at::kInt).device(test_device()));
    const auto qw = make_input({96}, dtype);
    auto [rope_t, rope_s] = both<Pair(const at::Tensor&, const at::Tensor&, const OptT&, const OptT&, double,
                                      const at::Tensor&, const at::Tensor&, const at::Tensor&)>(
        KHUB_VARIANT_ROPE3D, KHUB_VARIANT_ROPE3D_STABLE, "rms_norm_rope_table_qk");
    const auto [e0, e1] = rope_t.call(q, q.flip(0), qw, qw, 1e-5, cos_t, sin_t, index);
    const auto [f0, f1] = rope_s.call(q, q.flip(0), qw, qw, 1e-5, cos_t, sin_t, index);
    expect_same({e0, e1}, {f0, f1}, "rms_norm_rope_table_qk");
  }
}

// The same bad input fails in both builds with the same message; only the exception type differs.
TEST(StableAbi, ChecksFailWithTheTorchBuildsWording) {
  auto [f_t, f_s] = both<at::Tensor(const at::Tensor&, const OptT&, double)>(KHUB_VARIANT_RMSNORM,
                                                                            KHUB_VARIANT_RMSNORM_STABLE, "rms_norm");
  const auto x = make_input({4, 64}, at::kBFloat16);
  const auto w = make_input({32}, at::kBFloat16);
  std::string torch_msg, stable_msg;
  try {
    f_t.call(x, w, 1e-6);
  } catch (const c10::Error& e) {
    torch_msg = e.what_without_backtrace();
  }
  try {
    f_s.call(x, w, 1e-6);
  } catch (const c10::Error&) {
    ADD_FAILURE() << "the stable build threw c10::Error";
  } catch (const std::runtime_error& e) {
    stable_msg = e.what();
  }
  const std::string expected = "rms_norm: weight must have shape [64], got [32]";
  EXPECT_NE(torch_msg.find(expected), std::string::npos) << torch_msg;
  EXPECT_NE(stable_msg.find(expected), std::string::npos) << stable_msg;
}

#endif

#ifdef KHUB_VARIANT_RMSNORM_STABLE_CUDA
TEST(StableAbi, CudaVariantAlsoServesCpuTensors) {
  const std::string id = load_variant(KHUB_VARIANT_RMSNORM_STABLE_CUDA);
  auto f = op<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double)>(id, "rms_norm");
  const auto x = at::randn({3, 256}, at::kBFloat16);
  const auto y = f.call(x, std::nullopt, 1e-6);
  const auto xd = x.to(at::kDouble);
  expect_close(y, xd * at::rsqrt(xd.pow(2).mean(-1, true) + 1e-6), at::kBFloat16, "stable cuda variant on cpu");
}
#endif

}  // namespace
}  // namespace khub_test
