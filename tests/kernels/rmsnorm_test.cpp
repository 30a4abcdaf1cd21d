// rmsnorm kernel: rms_norm, rms_norm_rounding, fused_add_rms_norm vs a float64 reference, every
// dtype x shape family x layout, plus the checks on bad input.
#include <optional>
#include <tuple>
#include <utility>

#include "kernel_test_support.h"

namespace khub_test {
namespace {

using OptT = std::optional<at::Tensor>;
using RmsSig = at::Tensor(const at::Tensor&, const OptT&, double);
using RoundSig = at::Tensor(const at::Tensor&, const OptT&, double, c10::string_view);
using AddSig = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const OptT&, double);

#ifdef KHUB_VARIANT_RMSNORM_STABLE
const std::string& id() { return kernel_id(KHUB_VARIANT_RMSNORM, KHUB_VARIANT_RMSNORM_STABLE); }
#else
const std::string& id() { return kernel_id(KHUB_VARIANT_RMSNORM, nullptr); }
#endif

at::Tensor reference(const at::Tensor& x, const OptT& w, double eps, const std::string& rounding) {
  const auto xd = x.to(at::kDouble);
  const auto t = xd * at::rsqrt(xd.pow(2).mean(-1, true) + eps);
  if (!w) return t;
  const auto wd = w->to(xd.device()).to(at::kDouble);
  if (rounding == "qwen3") return round_to(t, x.scalar_type()) * wd;
  if (rounding == "diffusers" && w->scalar_type() != at::kFloat) return round_to(t, w->scalar_type()) * wd;
  return t * wd;
}

OptT make_weight(int64_t n, int kind, at::ScalarType dtype) {
  if (kind == 0) return std::nullopt;
  auto w = make_input({n}, kind == 1 ? dtype : at::kFloat, Layout::Contiguous, 0.1, 1.0);
  return w;
}

class RmsNormTest : public ::testing::TestWithParam<at::ScalarType> {};

TEST_P(RmsNormTest, MatchesReferenceForEveryShapeLayoutAndWeight) {
  const auto dtype = GetParam();
  auto f = op<RmsSig>(id(), "rms_norm");
  std::vector<std::vector<int64_t>> shapes = {
      {1, 2048}, {7, 2048}, {2, 3, 4, 128}, {33, 1000}, {9, 333}, {3, 4096}, {2, 20000}, {1, 1, 5}, {5, 3072}};
  // Enough rows (>= 2048) for each of the CUDA launcher's dedicated kernels and their size bands
  // (rmsnorm.cu: rows of 128, 2048 up to 16 MiB / 32 MiB / above in 16 bits, 3072, 4096 up to 32 MiB
  // and above).
  if (on_cuda())
    shapes.insert(shapes.end(), {{16, 256, 128}, {2, 1024, 2048}, {2, 2688, 2048}, {8200, 2048}, {2048, 4096},
                                 {4100, 4096}, {2048, 3072}, {3, 8192}, {256, 8192}, {257, 8192}});
  for (const auto& shape : shapes) {
    for (Layout layout : {Layout::Contiguous, Layout::RowStrided, Layout::Misaligned}) {
      for (int wk = 0; wk < 3; ++wk) {
        const auto x = make_input(shape, dtype, layout);
        const auto w = make_weight(shape.back(), wk, dtype);
        poison_next(x.sizes(), dtype);
        const auto y = f.call(x, w, 1e-6);
        EXPECT_EQ(y.scalar_type(), dtype);
        EXPECT_TRUE(y.is_contiguous());
        const std::string what = "rms_norm " + c10::str(x.sizes()) + " " + layout_name(layout) + " weight " +
                                 std::to_string(wk);
        record_error("rms_norm", dtype, expect_close(y, reference(x, w, 1e-6, "fused"), dtype, what));
      }
    }
  }
}

// Rows whose outer blocks have a gap between them (a narrowed sequence, a subset of heads) keep
// the division per row; contiguous and row-strided inputs are folded into one block of rows
// (as_one_block). Sizes on CUDA reach the dedicated kernels for rows of 2048 and of 128.
TEST_P(RmsNormTest, OuterBlocksWithGapsKeepTheirRowOffsets) {
  const auto dtype = GetParam();
  auto f = op<RmsSig>(id(), "rms_norm");
  auto fa = op<AddSig>(id(), "fused_add_rms_norm");
  // shape with `pad` more rows in dimension -2 than taken, narrowed from `offset`.
  auto gapped = [&](std::vector<int64_t> shape, int64_t pad, int64_t offset) {
    const int64_t inner = shape[shape.size() - 2];
    shape[shape.size() - 2] += pad;
    return make_input(shape, dtype).narrow(-2, offset, inner);
  };
  const int64_t seq = on_cuda() ? 1100 : 5, tokens = on_cuda() ? 80 : 3;
  const std::vector<std::vector<int64_t>> shapes{{2, seq, 2048}, {1, tokens, 32, 128}};
  for (const auto& shape : shapes) {
    const auto x = gapped(shape, 2, 1), res = gapped(shape, 3, 3);
    const auto w = make_weight(shape.back(), 1, dtype);
    const std::string what = c10::str(x.sizes()) + " strides " + c10::str(x.strides());
    record_error("rms_norm", dtype, expect_close(f.call(x, w, 1e-6), reference(x, w, 1e-6, "fused"), dtype, what));
    const auto [y, sum] = fa.call(x, res, w, 1e-6);
    const auto sum_ref = round_to(x.to(at::kDouble) + res.to(at::kDouble), dtype);
    EXPECT_TRUE(at::equal(sum.to(at::kDouble), sum_ref)) << "residual out " << what;
    record_error("fused_add_rms_norm", dtype,
                 expect_close(y, reference(sum_ref.to(dtype), w, 1e-6, "fused"), dtype, "fused_add " + what));
  }
}

TEST_P(RmsNormTest, RoundingConventionsMatchTheirReferences) {
  const auto dtype = GetParam();
  auto f = op<RoundSig>(id(), "rms_norm_rounding");
  for (const char* rounding : {"fused", "qwen3", "diffusers"}) {
    // {5, 4096}, {2, 8192}: few-rows kernels
    std::vector<std::vector<int64_t>> shapes{{3, 8, 128}, {4, 2048}, {5, 4096}, {2, 8192}};
    // The keep kernel bypassing L1 and reading x into L1 (fp32: the engine).
    if (on_cuda()) shapes.insert(shapes.end(), {{2048, 2048}, {2, 2688, 2048}});
    for (const auto& shape : shapes) {
      for (int wk = 0; wk < 3; ++wk) {
        const auto x = make_input(shape, dtype);
        const auto w = make_weight(shape.back(), wk, dtype);
        const auto y = f.call(x, w, 1e-5, rounding);
        record_error(std::string("rms_norm_rounding ") + rounding, dtype,
                     expect_close(y, reference(x, w, 1e-5, rounding), dtype,
                                  std::string(rounding) + " " + c10::str(x.sizes()) + " w" + std::to_string(wk)));
      }
    }
  }
}

TEST_P(RmsNormTest, FusedAddReturnsNormOfRoundedSumAndTheSum) {
  const auto dtype = GetParam();
  auto f = op<AddSig>(id(), "fused_add_rms_norm");
  std::vector<std::vector<int64_t>> shapes{{1, 2048}, {6, 4096}, {5, 333}, {2, 3, 128}};
  // On CUDA: 16-bit rows of 2048 on the keep kernel at any count ({1, 2048}, {130, 2048} too), fp32
  // from 2048 rows; 16-bit rows of 4096 on the keep kernel below 2048 rows ({6, 4096} too), on the
  // two-pass kernel at 256 x 2 from 2048 and at 512 x 1 from 4096 rows; fp32 rows of 4096 on the
  // keep kernel from 2048 rows, on the two-pass kernel at 1024 x 1 from 4096; 16-bit rows of 8192 on
  // the keep kernel up to 256 rows, on the row engine beyond.
  if (on_cuda())
    shapes.insert(shapes.end(),
                  {{130, 2048}, {2, 2688, 2048}, {1000, 4096}, {2048, 4096}, {4100, 4096}, {3, 8192}, {256, 8192}});
  for (const auto& shape : shapes) {
    for (Layout layout : {Layout::Contiguous, Layout::RowStrided, Layout::Misaligned}) {
      const auto x = make_input(shape, dtype, layout);
      const auto res = make_input(shape, dtype, Layout::RowStrided);
      const auto w = make_weight(shape.back(), 1, dtype);
      const auto [y, s] = f.call(x, res, w, 1e-6);
      const auto sum_ref = round_to(x.to(at::kDouble) + res.to(at::kDouble), dtype);
      EXPECT_TRUE(at::equal(s.to(at::kDouble), sum_ref)) << "residual out " << c10::str(shape);
      const auto ref = reference(sum_ref.to(dtype), w, 1e-6, "fused");
      record_error("fused_add_rms_norm", dtype,
                   expect_close(y, ref, dtype, "fused_add " + c10::str(shape) + " " + layout_name(layout)));
    }
  }
}

// A residual stream through back-to-back calls with no synchronisation in between: each call reads
// the previous call's outputs. On CUDA the kernels are launched with programmatic dependent launch,
// so a kernel may start while the previous one drains; each step is checked against the reference
// computed from the previous step's outputs as finally stored, so a read before the previous
// kernel's writes landed shows up as a mismatch. The calls queue up behind other work so they run
// back to back on the GPU; at 64 rows the whole grid is resident at once, so a kernel that did not
// wait would run alongside its producer (a mutant without griddepcontrol.wait fails here: run_h200.sh
// mutate); 8192 rows take many waves.
TEST_P(RmsNormTest, ChainedCallsReadThePreviousCallsOutputs) {
  const auto dtype = GetParam();
  auto f = op<AddSig>(id(), "fused_add_rms_norm");
  // 16-bit rows of 4096: 64 on the keep kernel, 2048 and 8192 on the two-pass kernel (which reads x
  // and the residual twice, both after griddepcontrol.wait); fp32 rows of 4096: 64 on the row
  // engine, 2048 on the keep kernel, 8192 on the two-pass kernel; 5376 rows of 2048 on the keep kernel.
  std::vector<std::vector<int64_t>> shapes{{64, 4096}};
  if (on_cuda()) shapes.insert(shapes.end(), {{2048, 4096}, {8192, 4096}, {5376, 2048}});
  for (const auto& shape : shapes) {
    const auto w = make_weight(shape.back(), 1, dtype);
    std::vector<at::Tensor> ys{make_input(shape, dtype)}, ss{make_input(shape, dtype)};
    queue_behind_busy_gpu();
    for (int i = 0; i < 8; ++i) {
      auto [y, s] = f.call(ys.back(), ss.back(), w, 1e-6);
      ys.push_back(y);
      ss.push_back(s);
    }
    for (size_t i = 1; i < ys.size(); ++i) {
      const std::string step = c10::str(shape) + ", step " + std::to_string(i);
      const auto sum_ref = round_to(ys[i - 1].to(at::kDouble) + ss[i - 1].to(at::kDouble), dtype);
      EXPECT_TRUE(at::equal(ss[i].to(at::kDouble), sum_ref)) << "residual out of " << step;
      expect_close(ys[i], reference(sum_ref.to(dtype), w, 1e-6, "fused"), dtype, step);
    }
  }
}

// The same for plain RMSNorm, whose CUDA calls here take rmsnorm's own kernels: 64 16-bit rows of
// 4096 the one-pass kernel for a few rows (512 threads a row), 4096 16-bit rows of 2048 (16 MiB) the
// one-pass keep kernel, fp32 rows of 3072 the two-pass kernel (it reads x twice, both times after
// griddepcontrol.wait).
TEST_P(RmsNormTest, ChainedNormsReadThePreviousCallsOutput) {
  const auto dtype = GetParam();
  auto f = op<RmsSig>(id(), "rms_norm");
  const bool fp32 = dtype == at::kFloat;
  std::vector<std::pair<int64_t, int64_t>> cases{{64, fp32 ? 3072 : 4096}};  // rows, n
  if (on_cuda()) cases.emplace_back(4096, fp32 ? 3072 : 2048);
  for (const auto& [rows, n] : cases) {
    const auto w = make_weight(n, 1, dtype);
    std::vector<at::Tensor> ys{make_input({rows, n}, dtype)};
    queue_behind_busy_gpu();
    for (int i = 0; i < 8; ++i) ys.push_back(f.call(ys.back(), w, 1e-6));
    for (size_t i = 1; i < ys.size(); ++i)
      expect_close(ys[i], reference(ys[i - 1], w, 1e-6, "fused"), dtype,
                   std::to_string(rows) + " x " + std::to_string(n) + ", step " + std::to_string(i));
  }
}

TEST_P(RmsNormTest, LargeInputUses64BitOffsets) {
  const auto dtype = GetParam();
  auto f = op<RmsSig>(id(), "rms_norm");
  // On the GPU M*N > 2^31; rows are independent, so the first and last rows are checked.
  const int64_t n = 16384, m = on_cuda() ? (int64_t{1} << 31) / n + 3 : 1024;
  if (on_cuda() && dtype == at::kFloat) GTEST_SKIP() << "bf16/fp16 cover the 64-bit path; fp32 would need 17 GB";
  auto x = at::empty({m, n}, at::TensorOptions().dtype(dtype).device(test_device()));
  x.normal_();
  const auto w = make_weight(n, 1, dtype);
  const auto y = f.call(x, w, 1e-6);
  for (int64_t start : {int64_t{0}, m - 4}) {
    const auto xs = x.narrow(0, start, 4);
    record_error("rms_norm large", dtype,
                 expect_close(y.narrow(0, start, 4), reference(xs, w, 1e-6, "fused"), dtype,
                              "large rows at " + std::to_string(start)));
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, RmsNormTest, ::testing::ValuesIn(kDtypes),
                         [](const auto& info) { return std::string(c10::toString(info.param)); });

TEST(RmsNormCpu, ParallelRowsMatchOneThread) {
  auto f = op<RmsSig>(id(), "rms_norm");
  auto fa = op<AddSig>(id(), "fused_add_rms_norm");
  const auto cpu = at::TensorOptions().dtype(at::kBFloat16);
  const auto x = at::randn({3, 40, 4096}, cpu), r = at::randn({3, 40, 4096}, cpu), w = at::randn({4096}, cpu);
  expect_cpu_parallel_rows_match_serial(
      [&] {
        const auto [y, s] = fa.call(x, r, w, 1e-6);
        return std::vector<at::Tensor>{f.call(x, w, 1e-6), y, s};
      },
      "rms_norm / fused_add_rms_norm");
}

TEST(RmsNormErrors, BadInputsFailWithClearMessages) {
  auto f = op<RmsSig>(id(), "rms_norm");
  auto fa = op<AddSig>(id(), "fused_add_rms_norm");
  auto fr = op<RoundSig>(id(), "rms_norm_rounding");
  const auto dev = at::TensorOptions().device(test_device());
  const auto x = make_input({4, 64}, at::kBFloat16);
  expect_torch_error([&] { f.call(x.to(at::kInt), std::nullopt, 1e-6); }, "unsupported dtype");
  expect_torch_error([&] { f.call(x, at::ones({63}, dev.dtype(at::kBFloat16)), 1e-6); }, "weight must have shape [64]");
  expect_torch_error([&] { f.call(x, at::ones({64}, dev.dtype(at::kHalf)), 1e-6); }, "weight dtype");
  expect_torch_error([&] { f.call(make_input({64, 4}, at::kBFloat16).t(), std::nullopt, 1e-6); },
                     "last dimension must be contiguous");
  expect_torch_error([&] { f.call(make_input({4, 6, 5, 64}, at::kBFloat16).transpose(0, 1), std::nullopt, 1e-6); },
                     "cannot be collapsed");
  expect_torch_error([&] { f.call(x, std::nullopt, -1.0); }, "eps must be >= 0");
  expect_torch_error([&] { fa.call(x, make_input({4, 32}, at::kBFloat16), std::nullopt, 1e-6); }, "residual shape");
  expect_torch_error([&] { fa.call(x, x.to(at::kFloat), std::nullopt, 1e-6); }, "residual dtype");
  expect_torch_error([&] { fr.call(x, std::nullopt, 1e-6, "llama"); }, "unknown rounding convention 'llama'");
  if (on_cuda()) expect_torch_error([&] { f.call(x, at::ones({64}, at::kBFloat16), 1e-6); }, "expected device");
}

TEST(RmsNormEdge, EmptyInputGivesEmptyOutput) {
  auto f = op<RmsSig>(id(), "rms_norm");
  const auto x = make_input({0, 128}, at::kBFloat16);
  EXPECT_EQ(f.call(x, std::nullopt, 1e-6).sizes(), x.sizes());
}

TEST(RmsNormEdge, Fp16OverflowRangeInputsStayFinite) {
  auto f = op<RmsSig>(id(), "rms_norm");
  const auto x = make_input({8, 2048}, at::kHalf, Layout::Contiguous, 8e3);  // |x| up to ~4e4 < 65504
  const auto y = f.call(x, std::nullopt, 1e-6);
  expect_close(y, reference(x, std::nullopt, 1e-6, "fused"), at::kHalf, "fp16 large values");
}

}  // namespace
}  // namespace khub_test
