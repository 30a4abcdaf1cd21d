// geglu kernel: geglu (erf and tanh) and gelu_tanh vs a float64 reference.
#include <cmath>
#include <limits>

#include "kernel_test_support.h"

namespace khub_test {
namespace {

using GegluSig = at::Tensor(const at::Tensor&, bool);
using GeluSig = at::Tensor(const at::Tensor&);

#ifdef KHUB_VARIANT_GEGLU_STABLE
const std::string& id() { return kernel_id(KHUB_VARIANT_GEGLU, KHUB_VARIANT_GEGLU_STABLE); }
#else
const std::string& id() { return kernel_id(KHUB_VARIANT_GEGLU, nullptr); }
#endif

at::Tensor gelu_ref(const at::Tensor& g, bool tanh_form) {
  if (!tanh_form) return 0.5 * g * (1 + at::erf(g * M_SQRT1_2));
  return 0.5 * g * (1 + at::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g.pow(3))));
}

at::Tensor geglu_ref(const at::Tensor& x, bool tanh_form) {
  const auto xd = x.to(at::kDouble);
  const auto h = xd.size(-1) / 2;
  return xd.narrow(-1, 0, h) * gelu_ref(xd.narrow(-1, h, h), tanh_form);
}

class GegluTest : public ::testing::TestWithParam<at::ScalarType> {};

TEST_P(GegluTest, MatchesReferenceForEveryShapeAndLayout) {
  const auto dtype = GetParam();
  auto f = op<GegluSig>(id(), "geglu");
  // The last two: several rows of 256 vectors (16-bit n = 2048, fp32 n = 1024), one 256-thread block each.
  const std::vector<std::vector<int64_t>> shapes = {
      {2, 64, 2 * 256}, {1, 2 * 1000}, {3, 2 * 333}, {5, 2 * 8}, {1, 1, 2 * 2048}, {7, 2 * 1280}, {2, 2 * 5},
      {3, 5, 2 * 2048}, {9, 2 * 1024}};
  for (const auto& shape : shapes) {
    for (Layout layout : {Layout::Contiguous, Layout::RowStrided, Layout::Misaligned}) {
      for (bool approximate : {false, true}) {
        const auto x = make_input(shape, dtype, layout, 2.0);
        auto out_shape = shape;
        out_shape.back() /= 2;
        poison_next(out_shape, dtype);
        const auto y = f.call(x, approximate);
        EXPECT_EQ(y.sizes(), at::IntArrayRef(out_shape));
        record_error(approximate ? "geglu tanh" : "geglu erf", dtype,
                     expect_close(y, geglu_ref(x, approximate), dtype,
                                  "geglu " + c10::str(shape) + " " + layout_name(layout)));
      }
    }
  }
}

TEST_P(GegluTest, GeluTanhMatchesReference) {
  const auto dtype = GetParam();
  auto f = op<GeluSig>(id(), "gelu_tanh");
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 16, 8192}, std::vector<int64_t>{3, 333}, std::vector<int64_t>{1, 7}}) {
    for (Layout layout : {Layout::Contiguous, Layout::RowStrided, Layout::Misaligned}) {
      const auto x = make_input(shape, dtype, layout, 3.0);
      poison_next(x.sizes(), dtype);
      const auto y = f.call(x);
      record_error("gelu_tanh", dtype,
                   expect_close(y, gelu_ref(x.to(at::kDouble), true), dtype,
                                "gelu_tanh " + c10::str(shape) + " " + layout_name(layout)));
    }
  }
}

// Gates far in both tails, infinities and NaN: the same special values as the float64 formula
// (eager's semantics: GELU(-inf) = -inf * 0 = NaN), and the finite outputs within tolerance.
TEST(GegluSpecialValues, TailsInfinitiesAndNanFollowTheFormula) {
  auto fg = op<GegluSig>(id(), "geglu");
  auto ft = op<GeluSig>(id(), "gelu_tanh");
  const double inf = std::numeric_limits<double>::infinity();
  const auto gate = at::tensor({-inf, -1e30, -1e4, -100., -12., -5., -0.5, 0., 0.5, 5., 12., 100., 1e4, 1e30, inf,
                                std::numeric_limits<double>::quiet_NaN()},
                               at::TensorOptions().dtype(at::kDouble));
  const auto x = at::cat({at::ones_like(gate), gate}).view({1, -1}).to(at::kFloat).to(test_device());
  for (bool approximate : {false, true}) {
    const auto ref = gelu_ref(gate, approximate);
    const auto y = (approximate ? ft.call(gate.to(at::kFloat).to(test_device()).view({1, -1}))
                                : fg.call(x, false)).view({-1}).to(at::kDouble).cpu();
    const auto finite = at::isfinite(ref);
    const std::string what = approximate ? "gelu_tanh special values" : "geglu erf special values";
    EXPECT_TRUE(at::equal(at::isnan(y), at::isnan(ref))) << what << ": " << y << " vs " << ref;
    EXPECT_TRUE(at::equal(at::isinf(y) & (y > 0), at::isinf(ref) & (ref > 0))) << what << ": " << y << " vs " << ref;
    EXPECT_TRUE(at::equal(at::isinf(y) & (y < 0), at::isinf(ref) & (ref < 0))) << what << ": " << y << " vs " << ref;
    expect_close(y.masked_select(finite), ref.masked_select(finite), at::kFloat, what);
  }
}

TEST_P(GegluTest, LargeInputUses64BitOffsets) {
  const auto dtype = GetParam();
  if (on_cuda() && dtype == at::kFloat) GTEST_SKIP() << "bf16/fp16 cover the 64-bit path";
  auto f = op<GegluSig>(id(), "geglu");
  const int64_t h = 8192, m = on_cuda() ? (int64_t{1} << 31) / h + 5 : 512;
  auto x = at::empty({m, 2 * h}, at::TensorOptions().dtype(dtype).device(test_device()));
  x.normal_();
  const auto y = f.call(x, false);
  for (int64_t start : {int64_t{0}, m - 3})
    record_error("geglu large", dtype,
                 expect_close(y.narrow(0, start, 3), geglu_ref(x.narrow(0, start, 3), false), dtype,
                              "large rows at " + std::to_string(start)));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GegluTest, ::testing::ValuesIn(kDtypes),
                         [](const auto& info) { return std::string(c10::toString(info.param)); });

TEST(GegluCpu, ParallelRowsMatchOneThread) {
  auto f = op<GegluSig>(id(), "geglu");
  const auto x = at::randn({2, 64, 2 * 2048}, at::TensorOptions().dtype(at::kBFloat16));
  expect_cpu_parallel_rows_match_serial([&] { return std::vector<at::Tensor>{f.call(x, false)}; }, "geglu");
}

TEST(GegluErrors, BadInputsFailWithClearMessages) {
  auto f = op<GegluSig>(id(), "geglu");
  auto g = op<GeluSig>(id(), "gelu_tanh");
  expect_torch_error([&] { f.call(make_input({4, 7}, at::kBFloat16), false); }, "last dimension must be even");
  expect_torch_error([&] { f.call(make_input({4, 8}, at::kBFloat16).to(at::kDouble), false); }, "unsupported dtype");
  expect_torch_error([&] { f.call(make_input({8, 4}, at::kBFloat16).t(), false); }, "last dimension must be contiguous");
  expect_torch_error([&] { g.call(make_input({4, 8}, at::kBFloat16).to(at::kLong)); }, "unsupported dtype");
}

}  // namespace
}  // namespace khub_test
