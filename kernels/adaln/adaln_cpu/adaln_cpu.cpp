// CPU AdaLN: same numerics as the CUDA kernel.
#include <cmath>
#include <vector>

#include "adaln.h"
#include "khub_kernels/cpu_numeric.h"

namespace khub_kernels::adaln {
namespace {

using namespace khub_kernels::cpu;

template <typename T>
struct Mod {
  const T* table;
  const T* base;
  // Rounded to T like the CUDA kernel (and the model's own add of two T tensors).
  float operator[](int64_t d) const {
    return table ? round_to<T>(to_float(table[d]) + to_float(base[d])) : to_float(base[d]);
  }
};

template <typename T>
Mod<T> mod_row(const ModSource& m, int64_t b, int64_t s) {
  return {static_cast<const T*>(m.table), static_cast<const T*>(m.base) + b * m.stride_b + s * m.stride_s};
}

template <typename T>
void run(const AdaLnArgs& a, int64_t row_begin, int64_t row_end) {
  const auto* x = static_cast<const T*>(a.x);
  const auto* delta = static_cast<const T*>(a.delta);
  auto* out = static_cast<T*>(a.out);
  auto* h_out = static_cast<T*>(a.h_out);
  std::vector<float> v(static_cast<size_t>(a.n));
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int64_t b = row / a.x_layout.inner, s = row % a.x_layout.inner;
    const T* xr = x + row_offset(a.x_layout, row);
    float ss = 0.f;
    if (delta) {
      const T* dr = delta + row_offset(a.delta_layout, row);
      const Mod<T> gate = mod_row<T>(a.gate, b, s);
      for (int64_t i = 0; i < a.n; ++i) {
        v[i] = round_to<T>(to_float(xr[i]) + gate[i] * to_float(dr[i]));
        h_out[row * a.n + i] = from_float<T>(v[i]);
      }
    } else {
      for (int64_t i = 0; i < a.n; ++i) v[i] = to_float(xr[i]);
    }
    for (int64_t i = 0; i < a.n; ++i) ss += v[i] * v[i];
    const float r = 1.f / std::sqrt(ss / static_cast<float>(a.n) + a.eps);
    const Mod<T> scale = mod_row<T>(a.scale, b, s), shift = mod_row<T>(a.shift, b, s);
    for (int64_t i = 0; i < a.n; ++i) out[row * a.n + i] = from_float<T>(v[i] * r * (1.f + scale[i]) + shift[i]);
  }
}

}  // namespace

void adaln_cpu(const AdaLnArgs& a, int64_t row_begin, int64_t row_end) {
  dispatch(a.dtype, [&]<typename T>() { run<T>(a, row_begin, row_end); });
}

}  // namespace khub_kernels::adaln
