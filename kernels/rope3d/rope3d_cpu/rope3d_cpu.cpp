// CPU RoPE: same numerics as the CUDA kernels (std::sin/cos in double for Coords mode, rounded).
#include <cmath>
#include <vector>

#include "khub_kernels/cpu_numeric.h"
#include "rope3d.h"

namespace khub_kernels::rope3d {
namespace {

using namespace khub_kernels::cpu;

// cos/sin of both channels of pair p for token (b, s).
void trig_at(const TrigParams& t, int64_t b, int64_t s, int64_t p, float (&c)[2], float (&sn)[2]) {
  if (t.mode == TrigMode::Api) {
    const int64_t o = b * t.stride_b + s * t.stride_s + 2 * p;
    c[0] = t.cos[o], c[1] = t.cos[o + 1], sn[0] = t.sin[o], sn[1] = t.sin[o + 1];
    return;
  }
  if (p < t.pad_pairs) {
    c[0] = c[1] = 1.f, sn[0] = sn[1] = 0.f;
    return;
  }
  const int64_t j = p - t.pad_pairs, k = j / 3, ax = j % 3, o = b * t.stride_b + s * t.stride_s + ax;
  if (t.mode == TrigMode::Table) {
    const int64_t row = t.index[o];
    c[0] = c[1] = t.cos_table[row * t.f + k];
    sn[0] = sn[1] = t.sin_table[row * t.f + k];
  } else {
    const float angle = t.freqs[k] * (t.coords[o] * 2.f - 1.f);
    c[0] = c[1] = static_cast<float>(std::cos(static_cast<double>(angle)));
    sn[0] = sn[1] = static_cast<float>(std::sin(static_cast<double>(angle)));
  }
}

template <typename T>
void rotate(const RopeArgs& a, const T* x, const RowLayout& l, const void* weight, T* out, int64_t row_begin,
            int64_t row_end) {
  std::vector<float> v(static_cast<size_t>(a.d));
  for (int64_t row = row_begin; row < row_end; ++row) {
    const T* xr = x + row_offset(l, row);
    for (int64_t i = 0; i < a.d; ++i) v[i] = to_float(xr[i]);
    if (a.norm) {
      const float r = inv_rms(v.data(), a.d, a.eps);
      for (int64_t i = 0; i < a.d; ++i) v[i] = v[i] * r * (weight ? load_as_float(weight, a.weight_dtype, i) : 1.f);
    }
    const int64_t b = row / a.trig.seq, s = row % a.trig.seq;
    T* o = out + row * a.d;
    for (int64_t p = 0; p < a.d / 2; ++p) {
      float c[2], sn[2];
      trig_at(a.trig, b, s, p, c, sn);
      const float x0 = v[2 * p], x1 = v[2 * p + 1];
      const float p01 = -x1 * sn[0], p11 = x0 * sn[1];
      if (a.norm) {  // the fused op: x * cos added in one fused multiply-add, as the CUDA kernels do
        o[2 * p] = from_float<T>(std::fma(x0, c[0], p01));
        o[2 * p + 1] = from_float<T>(std::fma(x1, c[1], p11));
      } else {  // eager's order, bit for bit
        const float p00 = x0 * c[0], p10 = x1 * c[1];
        o[2 * p] = from_float<T>(p00 + p01);
        o[2 * p + 1] = from_float<T>(p10 + p11);
      }
    }
  }
}

template <typename T>
void run(const RopeArgs& a, int64_t row_begin, int64_t row_end) {
  rotate<T>(a, static_cast<const T*>(a.q), a.q_layout, a.q_weight, static_cast<T*>(a.q_out), row_begin, row_end);
  if (a.k)
    rotate<T>(a, static_cast<const T*>(a.k), a.k_layout, a.k_weight, static_cast<T*>(a.k_out), row_begin, row_end);
}

}  // namespace

void rope3d_cpu(const RopeArgs& a, int64_t row_begin, int64_t row_end) {
  dispatch(a.dtype, [&]<typename T>() { run<T>(a, row_begin, row_end); });
}

}  // namespace khub_kernels::rope3d
