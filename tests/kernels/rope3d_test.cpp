// rope3d kernel: API, table, coordinate and fused-norm modes vs a float64 reference; table mode
// bit-identical to API mode fed with diffusers-style full tables.
#include <tuple>

#include "kernel_test_support.h"

namespace khub_test {
namespace {

using Pair = std::tuple<at::Tensor, at::Tensor>;
using OptT = std::optional<at::Tensor>;
using ApiSig = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&);
using ApiQkSig = Pair(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&);
using TableSig = Pair(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&);
using CoordsSig = Pair(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&);
using NormSig = Pair(const at::Tensor&, const at::Tensor&, const OptT&, const OptT&, double, const at::Tensor&,
                     const at::Tensor&, const at::Tensor&);
using TablesSig = Pair(const at::Tensor&, int64_t, double);

#ifdef KHUB_VARIANT_ROPE3D_STABLE
const std::string& id() { return kernel_id(KHUB_VARIANT_ROPE3D, KHUB_VARIANT_ROPE3D_STABLE); }
#else
const std::string& id() { return kernel_id(KHUB_VARIANT_ROPE3D, nullptr); }
#endif

at::TensorOptions f32() { return at::TensorOptions().dtype(at::kFloat).device(test_device()); }

// Float64 rotation: out[2i] = x[2i] c[2i] - x[2i+1] s[2i], out[2i+1] = x[2i+1] c[2i+1] + x[2i] s[2i+1].
at::Tensor rotate_ref(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const auto xd = x.to(at::kDouble), c = cos.to(at::kDouble), s = sin.to(at::kDouble);
  const auto xe = xd.slice(-1, 0, {}, 2), xo = xd.slice(-1, 1, {}, 2);
  const auto even = xe * c.slice(-1, 0, {}, 2) - xo * s.slice(-1, 0, {}, 2);
  const auto odd = xo * c.slice(-1, 1, {}, 2) + xe * s.slice(-1, 1, {}, 2);
  return at::stack({even, odd}, -1).flatten(-2);
}

// For channel c of D: the table column k and axis a (-1 for the leading identity channels).
std::pair<at::Tensor, at::Tensor> channel_map(int64_t dd) {
  std::vector<int64_t> ks(dd), as(dd);
  const int64_t pad = (dd % 6) / 2;
  for (int64_t c = 0; c < dd; ++c) {
    const int64_t p = c / 2;
    if (p < pad) {
      ks[c] = 0, as[c] = -1;
    } else {
      ks[c] = (p - pad) / 3, as[c] = (p - pad) % 3;
    }
  }
  return {at::tensor(ks).to(test_device()), at::tensor(as).to(test_device())};
}

// diffusers-style full fp32 [B, S, D] tables from per-axis tables and an index [B or 1, S, 3].
Pair full_tables(const at::Tensor& cos_t, const at::Tensor& sin_t, const at::Tensor& index, int64_t dd) {
  const auto [ks, as] = channel_map(dd);
  const auto axis = as.clamp_min(0);
  const auto rows = index.to(at::kLong).index_select(2, axis);  // [B, S, D]
  const auto flat = rows * cos_t.size(1) + ks.view({1, 1, dd});
  auto c = cos_t.flatten().index_select(0, flat.flatten()).view(flat.sizes());
  auto s = sin_t.flatten().index_select(0, flat.flatten()).view(flat.sizes());
  const auto identity = (as < 0).view({1, 1, dd});
  return {at::where(identity, at::ones_like(c), c), at::where(identity, at::zeros_like(s), s)};
}

// The LTX grid (frames x height x width tokens) as per-axis positions and per-token indices.
struct Grid {
  at::Tensor positions, index;
};
Grid ltx_grid(int64_t b, int64_t fr, int64_t h, int64_t w, bool per_sample) {
  auto pf = at::arange(fr, f32()) * (8.0 / 25.0) / 20.0;
  auto ph = at::arange(h, f32()) * 32.0 / 2048.0;
  auto pw = at::arange(w, f32()) * 32.0 / 2048.0;
  const auto grids = at::meshgrid({at::arange(fr), at::arange(h) + fr, at::arange(w) + fr + h}, "ij");
  auto index = at::stack({grids[0], grids[1], grids[2]}, -1).reshape({1, fr * h * w, 3});
  if (per_sample) {
    // Sample i sees the grid shifted by i frames (positions cover fr + b frames).
    pf = at::arange(fr + b, f32()) * (8.0 / 25.0) / 20.0;
    std::vector<at::Tensor> per;
    for (int64_t i = 0; i < b; ++i) {
      auto t = index.clone();
      t.select(2, 0).add_(i);
      t.select(2, 1).add_(b);
      t.select(2, 2).add_(b);
      per.push_back(t);
    }
    index = at::cat(per, 0);
  }
  return {at::cat({pf, ph, pw}), index.to(at::kInt).to(test_device())};
}

class RopeTest : public ::testing::TestWithParam<at::ScalarType> {};

TEST_P(RopeTest, ApiModeMatchesReference) {
  const auto dtype = GetParam();
  auto f = op<ApiSig>(id(), "apply_rotary_emb");
  auto fqk = op<ApiQkSig>(id(), "apply_rotary_emb_qk");
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 5, 96}, std::vector<int64_t>{1, 3, 64},
                                            std::vector<int64_t>{2, 4, 2048}, std::vector<int64_t>{1, 1, 10}}) {
    for (Layout layout : {Layout::Contiguous, Layout::RowStrided, Layout::Misaligned}) {
      for (bool batch_broadcast : {false, true}) {
        const int64_t b = batch_broadcast ? 1 : shape[0];
        const auto angles = at::randn({b, shape[1], shape[2]}, f32()) * 20;
        const auto cos = at::cos(angles), sin = at::sin(angles);
        const auto x = make_input(shape, dtype, layout);
        const auto k = make_input(shape, dtype, Layout::RowStrided);
        poison_next(x.sizes(), dtype);
        const auto y = f.call(x, cos, sin);
        const std::string what = "api " + c10::str(shape) + " " + layout_name(layout);
        record_error("apply_rotary_emb", dtype, expect_close(y, rotate_ref(x, cos, sin), dtype, what));
        const auto [yq, yk] = fqk.call(x, k, cos, sin);
        EXPECT_TRUE(at::equal(yq, y)) << what;
        record_error("apply_rotary_emb_qk", dtype, expect_close(yk, rotate_ref(k, cos, sin), dtype, what + " k"));
      }
    }
  }
}

TEST_P(RopeTest, TableModeEqualsApiModeBitForBitAndMatchesReference) {
  const auto dtype = GetParam();
  auto tables = op<TablesSig>(id(), "ltx_rope_tables");
  auto ft = op<TableSig>(id(), "apply_rotary_emb_table_qk");
  auto fa = op<ApiQkSig>(id(), "apply_rotary_emb_qk");
  for (int64_t dd : {int64_t{2048}, int64_t{4096}, int64_t{96}, int64_t{20}}) {
    for (bool per_sample : {false, true}) {
      const Grid g = ltx_grid(2, 3, 4, 5, per_sample);
      const auto [cos_t, sin_t] = tables.call(g.positions, dd, 10000.0);
      ASSERT_EQ(cos_t.sizes(), at::IntArrayRef({g.positions.size(0), dd / 6}));
      for (Layout layout : {Layout::Contiguous, Layout::RowStrided, Layout::Misaligned}) {
        const auto q = make_input({2, 60, dd}, dtype, layout);
        const auto k = make_input({2, 60, dd}, dtype, Layout::Contiguous);
        const auto [yq, yk] = ft.call(q, k, cos_t, sin_t, g.index);
        const auto [cf, sf] = full_tables(cos_t, sin_t, g.index, dd);
        const auto [aq, ak] = fa.call(q, k, cf, sf);
        const std::string what = "table D=" + std::to_string(dd) + " " + layout_name(layout);
        EXPECT_TRUE(at::equal(yq, aq) && at::equal(yk, ak)) << what << ": table and API modes differ";
        record_error("apply_rotary_emb_table_qk", dtype, expect_close(yq, rotate_ref(q, cf, sf), dtype, what));
        expect_close(yk, rotate_ref(k, cf, sf), dtype, what + " k");
      }
    }
  }
}

TEST_P(RopeTest, CoordinateModeMatchesReference) {
  const auto dtype = GetParam();
  auto f = op<CoordsSig>(id(), "apply_rotary_emb_coords_qk");
  for (int64_t dd : {int64_t{2048}, int64_t{64}}) {
    const int64_t f_ = dd / 6;
    const auto freqs = at::pow(10000.0, at::linspace(0.0, 1.0, f_, f32())) * M_PI / 2.0;
    const auto coords = at::rand({2, 7, 3}, f32());
    const auto q = make_input({2, 7, dd}, dtype, Layout::RowStrided);
    const auto k = make_input({2, 7, dd}, dtype, Layout::Misaligned);
    const auto [yq, yk] = f.call(q, k, coords, freqs);
    // The angle is formed in fp32 exactly as diffusers does; its cos/sin in float64.
    const auto [ks, as] = channel_map(dd);
    const auto g = coords.index_select(2, as.clamp_min(0));
    const auto angle = freqs.index_select(0, ks).view({1, 1, dd}) * (g * 2 - 1);
    const auto identity = (as < 0).view({1, 1, dd});
    const auto cd = at::where(identity, at::ones_like(angle, at::kDouble), at::cos(angle.to(at::kDouble)));
    const auto sd = at::where(identity, at::zeros_like(angle, at::kDouble), at::sin(angle.to(at::kDouble)));
    record_error("apply_rotary_emb_coords_qk", dtype,
                 expect_close(yq, rotate_ref(q, cd, sd), dtype, "coords D=" + std::to_string(dd)));
    expect_close(yk, rotate_ref(k, cd, sd), dtype, "coords k D=" + std::to_string(dd));
  }
}

TEST_P(RopeTest, FusedNormAndRopeMatchesReference) {
  const auto dtype = GetParam();
  auto tables = op<TablesSig>(id(), "ltx_rope_tables");
  auto f = op<NormSig>(id(), "rms_norm_rope_table_qk");
  // CUDA picks one group per token for vector rows of up to 512 vectors (32-256 threads a token by
  // size; 96 and 1536 leave part of the group idle) and one group per row beyond; 23 tokens leave
  // part of the last block of 4 tokens idle.
  for (int64_t dd : {int64_t{2048}, int64_t{4096}, int64_t{100}, int64_t{96}, int64_t{1536}, int64_t{8192}}) {
    const int64_t s = dd == 96 ? 23 : 24;
    const Grid g = s == 23 ? ltx_grid(2, 1, 1, 23, true) : ltx_grid(2, 2, 3, 4, true);
    const auto [cos_t, sin_t] = tables.call(g.positions, dd, 10000.0);
    const auto [cf, sf] = full_tables(cos_t, sin_t, g.index, dd);
    for (int wk = 0; wk < 3; ++wk) {
      for (Layout layout : {Layout::Contiguous, Layout::Misaligned}) {
        const auto q = make_input({2, s, dd}, dtype, layout);
        const auto k = make_input({2, s, dd}, dtype, Layout::RowStrided);
        OptT qw, kw;
        if (wk > 0) {
          qw = make_input({dd}, wk == 1 ? dtype : at::kFloat, Layout::Contiguous, 0.1, 1.0);
          kw = make_input({dd}, wk == 1 ? dtype : at::kFloat, Layout::Contiguous, 0.1, 1.0);
        }
        const auto [yq, yk] = f.call(q, k, qw, kw, 1e-5, cos_t, sin_t, g.index);
        auto norm = [&](const at::Tensor& x, const OptT& w) {
          const auto xd = x.to(at::kDouble);
          auto n = xd * at::rsqrt(xd.pow(2).mean(-1, true) + 1e-5);
          return w ? n * w->to(at::kDouble) : n;
        };
        const std::string what = "norm+rope D=" + std::to_string(dd) + " w" + std::to_string(wk);
        record_error("rms_norm_rope_table_qk", dtype, expect_close(yq, rotate_ref(norm(q, qw), cf, sf), dtype, what));
        expect_close(yk, rotate_ref(norm(k, kw), cf, sf), dtype, what + " k");
      }
    }
  }
}

TEST_P(RopeTest, LargeInputUses64BitOffsets) {
  const auto dtype = GetParam();
  if (!on_cuda()) GTEST_SKIP() << "needs > 2^31 elements; runs in the gpu suite";
  if (dtype == at::kFloat) GTEST_SKIP() << "bf16/fp16 cover the 64-bit path";
  auto tables = op<TablesSig>(id(), "ltx_rope_tables");
  auto ft = op<TableSig>(id(), "apply_rotary_emb_table_qk");
  const int64_t dd = 2048, s = (int64_t{1} << 31) / dd + 5;
  const auto positions = at::rand({16}, f32());
  const auto [cos_t, sin_t] = tables.call(positions, dd, 10000.0);
  const auto index = at::randint(0, 16, {1, s, 3}, at::TensorOptions().dtype(at::kInt).device(test_device()));
  auto q = at::empty({1, s, dd}, at::TensorOptions().dtype(dtype).device(test_device()));
  q.normal_();
  const auto [yq, yk] = ft.call(q, q, cos_t, sin_t, index);
  for (int64_t start : {int64_t{0}, s - 3}) {
    const auto idx = index.narrow(1, start, 3);
    const auto [cf, sf] = full_tables(cos_t, sin_t, idx, dd);
    record_error("apply_rotary_emb_table_qk large", dtype,
                 expect_close(yq.narrow(1, start, 3), rotate_ref(q.narrow(1, start, 3), cf, sf), dtype, "large"));
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, RopeTest, ::testing::ValuesIn(kDtypes),
                         [](const auto& info) { return std::string(c10::toString(info.param)); });

TEST(RopeCpu, ParallelRowsMatchOneThread) {
  auto f = op<ApiQkSig>(id(), "apply_rotary_emb_qk");
  const auto q = at::randn({2, 64, 2048}, at::TensorOptions().dtype(at::kBFloat16));
  const auto k = at::randn({2, 64, 2048}, at::TensorOptions().dtype(at::kBFloat16));
  const auto angle = at::randn({2, 64, 2048}, at::TensorOptions().dtype(at::kFloat));
  const auto cos = angle.cos(), sin = angle.sin();
  expect_cpu_parallel_rows_match_serial(
      [&] {
        const auto [yq, yk] = f.call(q, k, cos, sin);
        return std::vector<at::Tensor>{yq, yk};
      },
      "apply_rotary_emb_qk");
}

TEST(RopeErrors, BadInputsFailWithClearMessages) {
  auto f = op<ApiSig>(id(), "apply_rotary_emb");
  auto ft = op<TableSig>(id(), "apply_rotary_emb_table_qk");
  auto fn = op<NormSig>(id(), "rms_norm_rope_table_qk");
  const auto x = make_input({1, 4, 12}, at::kBFloat16);
  const auto c = at::ones({1, 4, 12}, f32());
  expect_torch_error([&] { f.call(make_input({1, 4, 11}, at::kBFloat16), c, c); }, "D must be even");
  expect_torch_error([&] { f.call(x, c.to(at::kHalf), c); }, "cos: expected dtype Float");
  expect_torch_error([&] { f.call(x, at::ones({1, 4, 10}, f32()), c); }, "cos must have shape");
  expect_torch_error([&] { f.call(x.view({4, 12}), c, c); }, "q must have shape [B, S, D]");
  const auto tab = at::ones({5, 2}, f32());
  const auto idx = at::zeros({1, 4, 3}, at::TensorOptions().dtype(at::kInt).device(test_device()));
  expect_torch_error([&] { ft.call(x, make_input({1, 3, 12}, at::kBFloat16), tab, tab, idx); }, "k must match q");
  expect_torch_error([&] { ft.call(x, x, tab, tab, idx.to(at::kLong)); }, "index: expected dtype Int");
  expect_torch_error([&] { ft.call(x, x, at::ones({5, 3}, f32()), tab, idx); }, "tables must be contiguous [P, D/6]");
  if (!on_cuda()) expect_torch_error([&] { ft.call(x, x, tab, tab, idx + 5); }, "index values must lie in [0, 5)");
  // Empty tables: refused for an index on the GPU too (an illegal memory access before).
  const auto no_rows = at::ones({0, 2}, f32());
  expect_torch_error([&] { ft.call(x, x, no_rows, no_rows, idx); }, "index values must lie in [0, 0)");
  expect_torch_error([&] { fn.call(x, x, at::ones({12}, at::kBFloat16).to(test_device()), std::nullopt, 1e-5, tab, tab, idx); },
                     "give both q_weight and k_weight");
  auto tables = op<TablesSig>(id(), "ltx_rope_tables");
  expect_torch_error([&] { tables.call(at::zeros({4}, f32()), 12, 1.0); }, "theta must be finite, > 0 and != 1");
}

}  // namespace
}  // namespace khub_test
