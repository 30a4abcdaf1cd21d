// CPU AdaLN: the CUDA kernel's formula, y = v * r * (1 + scale) + shift with v the row (or the
// gated-residual sum) and r from cpu::inv_rms. Rows of a sample share their modulation, so
// 1 + scale and shift are worked out once for each modulation row, not for every row.
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

// A modulation row as floats, recomputed only when the row it comes from changes.
template <typename T>
class ModCache {
 public:
  explicit ModCache(int64_t n) : v_(static_cast<size_t>(n)) {}
  // Plus: 1.0 for scale (the kernel multiplies by 1 + scale), 0.0 for shift.
  const float* get(const Mod<T>& m, float plus) {
    if (m.base != base_) {
      base_ = m.base;
      for (size_t d = 0; d < v_.size(); ++d) v_[d] = plus + m[static_cast<int64_t>(d)];
    }
    return v_.data();
  }

 private:
  std::vector<float> v_;
  const T* base_ = nullptr;
};

template <typename T>
[[gnu::always_inline]] inline void rows(const AdaLnArgs& a, int64_t row_begin, int64_t row_end) {
  const auto* x = static_cast<const T*>(a.x);
  const auto* delta = static_cast<const T*>(a.delta);
  auto* out = static_cast<T*>(a.out);
  auto* h_out = static_cast<T*>(a.h_out);
  const int64_t n = a.n;
  std::vector<float> v(delta ? static_cast<size_t>(n) : 0);
  ModCache<T> scales(n), shifts(n), gates(n);
  RowWalk xw(a.x_layout, row_begin), dw(delta ? a.delta_layout : a.x_layout, row_begin);
  for (int64_t row = row_begin; row < row_end; ++row, xw.next(), dw.next()) {
    const int64_t b = xw.outer(), s = xw.inner();
    const T* xr = x + xw.offset();
    T* o = out + row * n;
    const float* one_sc = scales.get(mod_row<T>(a.scale, b, s), 1.f);
    const float* sh = shifts.get(mod_row<T>(a.shift, b, s), 0.f);
    if (!delta) {
      const float r = inv_rms(xr, n, a.eps);
      for (int64_t i = 0; i < n; ++i) o[i] = from_float<T>(to_float(xr[i]) * r * one_sc[i] + sh[i]);
      continue;
    }
    const T* dr = delta + dw.offset();
    const float* gate = gates.get(mod_row<T>(a.gate, b, s), 0.f);
    T* h = h_out + row * n;
    for (int64_t i = 0; i < n; ++i) {
      const T hv = from_float<T>(to_float(xr[i]) + gate[i] * to_float(dr[i]));
      h[i] = hv;
      v[i] = to_float(hv);
    }
    const float r = inv_rms(v.data(), n, a.eps);
    for (int64_t i = 0; i < n; ++i) o[i] = from_float<T>(v[i] * r * one_sc[i] + sh[i]);
  }
}

}  // namespace

void adaln_cpu(const AdaLnArgs& a, int64_t row_begin, int64_t row_end) {
  dispatch(a.dtype, [&]<typename T>() {
    with_best_isa([&] [[gnu::always_inline]] { rows<T>(a, row_begin, row_end); });
  });
}

}  // namespace khub_kernels::adaln
