// qwen3_norms: every RMSNorm shape of Qwen3-8B (hidden 4096; per-head q/k norms over 128) through
// khub::get_kernel, checked against LibTorch's rms_norm and timed against it.
#include "example_util.h"

int main(int argc, char** argv) {
  auto kernel = example::load_or_exit("user/rmsnorm");
  auto rms_norm = example::op_or_exit(kernel, "rms_norm")
                      .typed<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double)>();
  auto device = example::pick_device();
  // On a CPU the long prefill shapes take seconds each; keep the run short there.
  bool quick = !device.is_cuda() || (argc > 1 && std::string(argv[1]) == "--quick");
  std::vector<int64_t> prefill = quick ? std::vector<int64_t>{128, 1024} : std::vector<int64_t>{128, 2048, 8192};
  std::vector<int64_t> decode = quick ? std::vector<int64_t>{1, 64} : std::vector<int64_t>{1, 64, 256};
  struct Shape { std::string what; std::vector<int64_t> dims; };
  std::vector<Shape> shapes;
  for (auto t : prefill) {
    shapes.push_back({"hidden norm", {1, t, 4096}});
    shapes.push_back({"q_norm", {1, t, 32, 128}});
    shapes.push_back({"k_norm", {1, t, 8, 128}});
  }
  for (auto b : decode) shapes.push_back({"decode norm", {b, 1, 4096}});

  auto opts = at::TensorOptions(device).dtype(at::kBFloat16);
  bool all_ok = true;
  std::printf("%-12s %-18s %10s %10s %8s %10s\n", "norm", "shape", "khub us", "torch us", "speedup", "rel-L2");
  for (const auto& s : shapes) {
    int64_t n = s.dims.back();
    auto x = at::randn(s.dims, opts);
    auto w = (1 + 0.1 * at::randn({n}, opts)).to(at::kBFloat16);
    auto y = rms_norm.call(x, w, 1e-6);
    auto ref = at::rms_norm(x.to(at::kDouble), {n}, w.to(at::kDouble), 1e-6);
    double err = example::rel_l2(y, ref);
    bool ok = err < 2.5e-3;
    all_ok &= ok;
    int reps = device.is_cuda() ? 200 : 10;
    double t_khub = example::median_us(device, [&] { (void)rms_norm.call(x, w, 1e-6); }, reps);
    double t_torch = example::median_us(device, [&] { (void)at::rms_norm(x, {n}, w, 1e-6); }, reps);
    std::string dims;
    for (auto d : s.dims) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    std::printf("%-12s %-18s %10.1f %10.1f %7.2fx %10.2e %s\n", s.what.c_str(), dims.c_str(), t_khub, t_torch,
                t_torch / t_khub, err, ok ? "ok" : "WRONG");
  }
  std::printf("qwen3_norms on %s: %s\n", device.is_cuda() ? "cuda" : "cpu", all_ok ? "all shapes match" : "MISMATCH");
  return all_ok ? 0 : 1;
}
