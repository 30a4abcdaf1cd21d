// ltx_block: the non-matmul path of one LTX-Video transformer block — AdaLN modulation, q/k
// RMSNorm + 3D RoPE, GELU-tanh feed-forward activation — in LibTorch eager versus khub's kernels
// loaded with get_kernel: once op for op as diffusers calls them (RoPE from full cos/sin tensors),
// once with the q/k norm and RoPE fused (per-axis tables gathered in the kernel). Checks all three
// against a float64 reference and times them.
#include <cmath>
#include <optional>
#include <tuple>

#include "example_util.h"

namespace {

constexpr int64_t kDim = 2048;

// LTX-Video's rotary tables for a latent grid F×H×W (diffusers LTXVideoRotaryPosEmbed at 25 fps:
// positions scaled to g_f = 0.016·f, g_h = h/64, g_w = w/64, angles (π/2)·θ^(k/340)·(2g − 1),
// interleaved j = 3k + axis, each angle used for both channels of a pair, 2 identity channels first).
std::pair<at::Tensor, at::Tensor> ltx_rope_tables(int64_t b, int64_t f, int64_t h, int64_t w, at::Device device) {
  auto fopt = at::TensorOptions(device).dtype(at::kFloat);
  auto grid = at::stack(at::meshgrid({at::arange(f, fopt) * (8.0 / 25.0) / 20.0, at::arange(h, fopt) * 32.0 / 2048.0,
                                      at::arange(w, fopt) * 32.0 / 2048.0},
                                     "ij"))
                  .flatten(1)
                  .transpose(0, 1);  // [S, 3]
  int64_t nf = kDim / 6;
  auto freqs = at::pow(10000.0, at::linspace(0.0, 1.0, nf, fopt)) * (M_PI / 2.0);
  auto angles = (freqs * (grid.unsqueeze(-1) * 2 - 1)).transpose(-1, -2).flatten(1);  // [S, 3F]
  auto pad = kDim % 6;
  auto s = angles.size(0);
  auto cos = at::cat({at::ones({s, pad}, fopt), angles.cos().repeat_interleave(2, -1)}, -1);
  auto sin = at::cat({at::zeros({s, pad}, fopt), angles.sin().repeat_interleave(2, -1)}, -1);
  return {cos.unsqueeze(0).expand({b, s, kDim}).contiguous(), sin.unsqueeze(0).expand({b, s, kDim}).contiguous()};
}

at::Tensor rope_eager(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  auto pairs = x.unflatten(2, {-1, 2}).unbind(-1);
  auto rotated = at::stack({-pairs[1], pairs[0]}, -1).flatten(2);
  return (x.to(cos.scalar_type()) * cos + rotated.to(cos.scalar_type()) * sin).to(x.scalar_type());
}

at::Tensor rms_noaffine_eager(const at::Tensor& x, double eps) {  // diffusers RMSNorm, no weight
  return (x * at::rsqrt(x.to(at::kFloat).pow(2).mean(-1, true) + eps)).to(x.scalar_type());
}

}  // namespace

int main(int argc, char** argv) {
  auto device = example::pick_device();
  bool small = !device.is_cuda() || (argc > 1 && std::string(argv[1]) == "--quick");
  int64_t b = 2, f = small ? 3 : 7, h = small ? 8 : 16, w = small ? 12 : 24, s = f * h * w;

  auto rmsnorm = example::load_or_exit("user/rmsnorm");
  auto rope3d = example::load_or_exit("user/rope3d");
  auto geglu = example::load_or_exit("user/geglu");
  auto adaln = example::load_or_exit("user/adaln");
  auto rms_norm = example::op_or_exit(rmsnorm, "rms_norm")
                      .typed<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double)>();
  auto rope = example::op_or_exit(rope3d, "apply_rotary_emb")
                  .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
  auto gelu_tanh = example::op_or_exit(geglu, "gelu_tanh").typed<at::Tensor(const at::Tensor&)>();
  auto adaln_rms = example::op_or_exit(adaln, "adaln_rms")
                       .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, double)>();
  using Pair = std::tuple<at::Tensor, at::Tensor>;
  using OptT = std::optional<at::Tensor>;
  auto rope_tables = example::op_or_exit(rope3d, "ltx_rope_tables").typed<Pair(const at::Tensor&, int64_t, double)>();
  auto norm_rope = example::op_or_exit(rope3d, "rms_norm_rope_table_qk")
                       .typed<Pair(const at::Tensor&, const at::Tensor&, const OptT&, const OptT&, double,
                                   const at::Tensor&, const at::Tensor&, const at::Tensor&)>();

  auto opts = at::TensorOptions(device).dtype(at::kBFloat16);
  auto hidden = at::randn({b, s, kDim}, opts);
  auto table = at::randn({6, kDim}, opts) / 16;
  auto temb = at::randn({b, 1, 6 * kDim}, opts) / 4;
  auto q = at::randn({b, s, kDim}, opts), k = at::randn({b, s, kDim}, opts);
  auto wq = (1 + 0.1 * at::randn({kDim}, opts)).to(at::kBFloat16), wk = (1 + 0.1 * at::randn({kDim}, opts)).to(at::kBFloat16);
  auto ff = at::randn({b, s, 4 * kDim}, opts);
  auto [cos, sin] = ltx_rope_tables(b, f, h, w, device);
  // Table mode: one row of angles per frame, row and column position, and each token's three rows.
  auto fopt = at::TensorOptions(device).dtype(at::kFloat);
  auto positions = at::cat({at::arange(f, fopt) * (8.0 / 25.0) / 20.0, at::arange(h, fopt) * 32.0 / 2048.0,
                            at::arange(w, fopt) * 32.0 / 2048.0});
  auto [cos_t, sin_t] = rope_tables.call(positions, kDim, 10000.0);
  auto axes = at::meshgrid({at::arange(f), at::arange(h) + f, at::arange(w) + f + h}, "ij");
  auto index = at::stack({axes[0], axes[1], axes[2]}, -1).reshape({1, s, 3}).to(at::kInt).to(device);
  auto ada = table.view({1, 1, 6, kDim}) + temb.view({b, 1, 6, kDim});
  auto shift = ada.select(2, 0), scale = ada.select(2, 1);  // [B, 1, D]

  auto run_eager = [&] {
    auto n = rms_noaffine_eager(hidden, 1e-6) * (1 + scale) + shift;
    auto qr = rope_eager(at::rms_norm(q, {kDim}, wq, 1e-5), cos, sin);
    auto kr = rope_eager(at::rms_norm(k, {kDim}, wk, 1e-5), cos, sin);
    return std::vector<at::Tensor>{n, qr, kr, at::gelu(ff, "tanh")};
  };
  auto run_khub = [&] {
    auto n = adaln_rms.call(hidden, scale, shift, 1e-6);
    auto qr = rope.call(rms_norm.call(q, wq, 1e-5), cos, sin);
    auto kr = rope.call(rms_norm.call(k, wk, 1e-5), cos, sin);
    return std::vector<at::Tensor>{n, qr, kr, gelu_tanh.call(ff)};
  };
  auto run_fused = [&] {
    auto n = adaln_rms.call(hidden, scale, shift, 1e-6);
    auto [qr, kr] = norm_rope.call(q, k, wq, wk, 1e-5, cos_t, sin_t, index);
    return std::vector<at::Tensor>{n, qr, kr, gelu_tanh.call(ff)};
  };
  // float64 ground truth of the same math
  auto d = [](const at::Tensor& t) { return t.to(at::kDouble); };
  auto rms64 = [&](const at::Tensor& x, const at::Tensor* wt, double eps) {
    auto y = d(x) * at::rsqrt(d(x).pow(2).mean(-1, true) + eps);
    return wt ? y * d(*wt) : y;
  };
  std::vector<at::Tensor> truth{rms64(hidden, nullptr, 1e-6) * (1 + d(scale)) + d(shift),
                                rope_eager(rms64(q, &wq, 1e-5), d(cos), d(sin)),
                                rope_eager(rms64(k, &wk, 1e-5), d(cos), d(sin)), at::gelu(d(ff), "tanh")};
  const char* names[] = {"adaln", "q norm+rope", "k norm+rope", "gelu_tanh"};
  auto eager_out = run_eager();
  auto khub_out = run_khub();
  auto fused_out = run_fused();
  bool ok = true, fused_ok = true;
  for (int i = 0; i < 4; ++i) {
    double e_eager = example::rel_l2(eager_out[i], truth[i]), bound = std::max(4e-3, 1.25 * e_eager);
    double e_khub = example::rel_l2(khub_out[i], truth[i]), e_fused = example::rel_l2(fused_out[i], truth[i]);
    ok &= e_khub <= bound;
    fused_ok &= e_fused <= bound;
    std::printf("%-12s rel-L2 vs fp64: khub %.2e, fused %.2e, eager %.2e %s\n", names[i], e_khub, e_fused, e_eager,
                e_khub <= bound && e_fused <= bound ? "ok" : "WRONG");
  }
  int reps = device.is_cuda() ? 100 : 5;
  double t_eager = example::median_us(device, run_eager, reps);
  double t_khub = example::median_us(device, run_khub, reps);
  double t_fused = example::median_us(device, run_fused, reps);
  const char* on = device.is_cuda() ? "cuda" : "cpu";
  std::printf("ltx_block [%lld,%lld,%lld] on %s: eager %.1f us, khub %.1f us, speedup %.2fx: %s\n", (long long)b,
              (long long)s, (long long)kDim, on, t_eager, t_khub, t_eager / t_khub, ok ? "correct" : "MISMATCH");
  std::printf("ltx_block [%lld,%lld,%lld] on %s, q/k norm + RoPE fused (table mode): khub %.1f us, speedup %.2fx: %s\n",
              (long long)b, (long long)s, (long long)kDim, on, t_fused, t_eager / t_fused,
              fused_ok ? "correct" : "MISMATCH");
  return ok && fused_ok ? 0 : 1;
}
