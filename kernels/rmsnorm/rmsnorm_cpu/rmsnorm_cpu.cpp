// CPU RMSNorm: the same numerics as the CUDA kernels (fp32 sum of squares in element order per row,
// r = 1 / sqrt(ss / n + eps), rounding conventions of rmsnorm.h).
#include <cmath>
#include <vector>

#include "khub_kernels/cpu_numeric.h"
#include "rmsnorm.h"

namespace khub_kernels::rmsnorm {
namespace {

using namespace khub_kernels::cpu;

template <typename T>
void run(const RmsNormArgs& a, int64_t row_begin, int64_t row_end) {
  const auto* x = static_cast<const T*>(a.x);
  const auto* res = static_cast<const T*>(a.residual);
  auto* out = static_cast<T*>(a.out);
  auto* res_out = static_cast<T*>(a.residual_out);
  const bool w_is_t = a.weight_dtype == a.dtype;
  std::vector<float> s(static_cast<size_t>(a.n));
  for (int64_t row = row_begin; row < row_end; ++row) {
    const T* xr = x + row_offset(a.x_layout, row);
    const T* rr = res ? res + row_offset(a.residual_layout, row) : nullptr;
    float ss = 0.f;
    for (int64_t i = 0; i < a.n; ++i) {
      float v = to_float(xr[i]);
      if (rr) {
        v = round_to<T>(v + to_float(rr[i]));
        res_out[row * a.n + i] = from_float<T>(v);
      }
      s[i] = v;
      ss += v * v;
    }
    const float r = 1.f / std::sqrt(ss / static_cast<float>(a.n) + a.eps);
    T* o = out + row * a.n;
    for (int64_t i = 0; i < a.n; ++i) {
      const float xr_ = s[i] * r;
      if (!a.weight) {
        o[i] = from_float<T>(xr_);
        continue;
      }
      const float w = load_as_float(a.weight, a.weight_dtype, i);
      float y;
      switch (a.rounding) {
        case Rounding::Qwen3: y = round_to<T>(xr_) * w; break;
        case Rounding::Diffusers: y = (w_is_t ? round_to<T>(xr_) : xr_) * w; break;
        default: y = xr_ * w; break;
      }
      o[i] = from_float<T>(y);
    }
  }
}

}  // namespace

void rms_norm_cpu(const RmsNormArgs& a, int64_t row_begin, int64_t row_end) {
  dispatch(a.dtype, [&]<typename T>() { run<T>(a, row_begin, row_end); });
}

}  // namespace khub_kernels::rmsnorm
