// rmsnorm_app: load the RMSNorm kernel from a Kernel Hub with khub and call it from C++.
// HF_ENDPOINT picks the hub (scripts/demo starts a local one); the variant fits this host.
#include <khub/kernel.h>
#include <ATen/ATen.h>
#include <iostream>

int main() {
  auto kernel = khub::get_kernel("user/rmsnorm", {.version = 1});
  if (!kernel) return std::cerr << "error: " << kernel.error().describe() << '\n', 1;
  auto rms_norm = kernel->op("rms_norm");
  if (!rms_norm) return std::cerr << "error: " << rms_norm.error().describe() << '\n', 1;

  auto device = at::hasCUDA() ? at::kCUDA : at::kCPU;
  auto x = at::randn({8, 4096}, at::TensorOptions(device).dtype(at::kBFloat16));
  auto w = at::randn({4096}, x.options());
  auto y = rms_norm->typed<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double)>()
               .call(x, w, 1e-6);
  auto expected = at::rms_norm(x.to(at::kFloat), {4096}, w.to(at::kFloat), 1e-6).to(at::kBFloat16);
  bool ok = at::allclose(y.to(at::kFloat), expected.to(at::kFloat), 1.6e-2, 1e-5);
  std::cout << "variant " << kernel->variant() << " on " << device << ": " << (ok ? "matches" : "DIFFERS")
            << " LibTorch\n";
  return ok ? 0 : 1;
}
