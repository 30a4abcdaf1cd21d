#pragma once
// Shared by the khub::ffi tests: float32 buffers with DLTensor views, plain C++ references of the bundled
// kernels' ops, and the calls that run each kernel's tvm-ffi build and compare with them. No torch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "khub/ffi.h"

namespace khub::ffi::test {

/// A float32 host buffer with its shape and a DLTensor view (row-major; strides left null as DLPack allows).
struct Buffer {
  std::vector<int64_t> shape;
  std::vector<float> data;
  DLTensor tensor{};

  explicit Buffer(std::vector<int64_t> s, float fill = 0.0f) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.assign(static_cast<size_t>(n), fill);
    tensor.data = data.data();
    tensor.device = DLDevice{kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = DLDataType{kDLFloat, 32, 1};
    tensor.shape = shape.data();
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  DLTensor* t() { return &tensor; }
  void randomize(std::mt19937& rng, float scale = 1.0f, float offset = 0.0f) {
    std::normal_distribution<float> normal;
    for (auto& v : data) v = offset + scale * normal(rng);
  }
};

inline double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = a.size() == b.size() ? 0.0 : 1e30;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])));
  return m;
}

// --- references (double math) ---

inline std::vector<float> rms_norm_ref(const std::vector<float>& x, const std::vector<float>* w, int64_t n,
                                       double eps) {
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size() / n; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < n; ++c) ss += double(x[r * n + c]) * x[r * n + c];
    const double inv = 1.0 / std::sqrt(ss / n + eps);
    for (int64_t c = 0; c < n; ++c) y[r * n + c] = float(x[r * n + c] * inv * (w ? (*w)[c] : 1.0f));
  }
  return y;
}

inline std::vector<float> geglu_ref(const std::vector<float>& x, int64_t two_h) {
  const int64_t h = two_h / 2;
  std::vector<float> y(x.size() / 2);
  for (size_t r = 0; r < x.size() / two_h; ++r)
    for (int64_t c = 0; c < h; ++c) {
      const double v = x[r * two_h + c], g = x[r * two_h + h + c];
      y[r * h + c] = float(v * 0.5 * g * (1.0 + std::erf(g / std::sqrt(2.0))));
    }
  return y;
}

// AdaLN with per-batch scale/shift [B, 1, D]: rms(x) * (1 + scale) + shift.
inline std::vector<float> adaln_ref(const std::vector<float>& x, const std::vector<float>& scale,
                                    const std::vector<float>& shift, int64_t b, int64_t s, int64_t d, double eps) {
  const std::vector<float> normed = rms_norm_ref(x, nullptr, d, eps);
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < s; ++j)
      for (int64_t c = 0; c < d; ++c) {
        const size_t k = (i * s + j) * d + c;
        y[k] = float(double(normed[k]) * (1.0 + scale[i * d + c]) + shift[i * d + c]);
      }
  return y;
}

// RoPE with full fp32 cos/sin [1, S, D] over x [B, S, D] (pairs (2i, 2i+1)).
inline std::vector<float> rope_ref(const std::vector<float>& x, const std::vector<float>& cos,
                                   const std::vector<float>& sin, int64_t b, int64_t s, int64_t d) {
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < s; ++j)
      for (int64_t c = 0; c < d; c += 2) {
        const size_t k = (i * s + j) * d + c, t = j * d + c;
        const double x0 = x[k], x1 = x[k + 1];
        y[k] = float(x0 * cos[t] - x1 * sin[t]);
        y[k + 1] = float(x1 * cos[t + 1] + x0 * sin[t + 1]);
      }
  return y;
}

/// Runs one op of each bundled kernel's tvm-ffi build on the CPU through `kernel` (named `name`) and
/// compares with the reference. Returns false (with gtest failures) when something differs.
inline void expect_kernel_computes(const Kernel& kernel, const std::string& name) {
  SCOPED_TRACE(name + " " + kernel.variant());
  std::mt19937 rng(7);
  if (name == "rmsnorm") {
    Buffer x({4, 256}), w({256}), y({4, 256});
    x.randomize(rng), w.randomize(rng, 0.1f, 1.0f);
    auto f = kernel.function_for("rms_norm", kDLCPU);
    ASSERT_TRUE(f) << f.error().describe();
    auto r = f->call({y.t(), x.t(), w.t(), 1e-6});
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_LT(max_diff(y.data, rms_norm_ref(x.data, &w.data, 256, 1e-6)), 1e-5);
  } else if (name == "geglu") {
    Buffer x({3, 128}), y({3, 64});
    x.randomize(rng);
    auto f = kernel.function_for("geglu", kDLCPU);
    ASSERT_TRUE(f) << f.error().describe();
    auto r = f->call({y.t(), x.t(), false});
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_LT(max_diff(y.data, geglu_ref(x.data, 128)), 1e-5);
  } else if (name == "adaln") {
    Buffer x({2, 5, 64}), scale({2, 1, 64}), shift({2, 1, 64}), y({2, 5, 64});
    x.randomize(rng), scale.randomize(rng, 0.1f), shift.randomize(rng, 0.1f);
    auto f = kernel.function_for("adaln_rms", kDLCPU);
    ASSERT_TRUE(f) << f.error().describe();
    auto r = f->call({y.t(), x.t(), scale.t(), shift.t(), 1e-6});
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_LT(max_diff(y.data, adaln_ref(x.data, scale.data, shift.data, 2, 5, 64, 1e-6)), 1e-5);
  } else if (name == "rope3d") {
    Buffer x({2, 6, 96}), cos({1, 6, 96}), sin({1, 6, 96}), y({2, 6, 96});
    x.randomize(rng), cos.randomize(rng), sin.randomize(rng);
    auto f = kernel.function_for("apply_rotary_emb", kDLCPU);
    ASSERT_TRUE(f) << f.error().describe();
    auto r = f->call({y.t(), x.t(), cos.t(), sin.t()});
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_LT(max_diff(y.data, rope_ref(x.data, cos.data, sin.data, 2, 6, 96)), 1e-5);
  } else {
    FAIL() << "no reference for " << name;
  }
}

inline const std::vector<std::string>& bundled_kernels() {
  static const std::vector<std::string> names{"rmsnorm", "rope3d", "geglu", "adaln"};
  return names;
}

}  // namespace khub::ffi::test
