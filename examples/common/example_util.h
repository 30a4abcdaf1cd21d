#pragma once
// Small helpers the examples share: load a kernel or exit, time a call, compare with a reference.
#include <khub/kernel.h>
#include <ATen/ATen.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace example {

inline khub::Kernel load_or_exit(const char* repo) {
  auto kernel = khub::get_kernel(repo, {.version = 1});
  if (!kernel) {
    std::fprintf(stderr, "error: %s: %s\n", repo, kernel.error().describe().c_str());
    std::exit(1);
  }
  std::printf("%-14s variant %s (id %s)\n", repo, kernel->variant().c_str(), kernel->id().c_str());
  return std::move(kernel).value();
}

inline khub::Op op_or_exit(const khub::Kernel& kernel, const char* name) {
  auto op = kernel.op(name);
  if (!op) {
    std::fprintf(stderr, "error: %s\n", op.error().describe().c_str());
    std::exit(1);
  }
  return std::move(op).value();
}

inline at::Device pick_device() { return at::hasCUDA() ? at::Device(at::kCUDA) : at::Device(at::kCPU); }

inline void sync(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

/// Median wall time of one call in microseconds (host-timed around a device sync).
template <typename Fn>
double median_us(const at::Device& device, Fn&& fn, int reps) {
  for (int i = 0; i < 3; ++i) fn();
  sync(device);
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    sync(device);
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
  return times[reps / 2];
}

/// Relative L2 error of `got` against `want` (computed in double).
inline double rel_l2(const at::Tensor& got, const at::Tensor& want) {
  auto g = got.to(at::kDouble), w = want.to(at::kDouble);
  return (g - w).norm().item<double>() / std::max(w.norm().item<double>(), 1e-30);
}

}  // namespace example
