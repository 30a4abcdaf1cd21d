// CPU GEGLU / GELU: same formulas as the CUDA kernel, in fp32.
#include <cmath>

#include "geglu.h"
#include "khub_kernels/cpu_numeric.h"

namespace khub_kernels::geglu {
namespace {

using namespace khub_kernels::cpu;

float gelu(float g, Act act) {
  if (act == Act::GeluErf) return 0.5f * g * (1.f + std::erf(g * 0.70710678118654752f));
  const float inner = 0.79788456080286536f * (g + 0.044715f * g * g * g);
  return 0.5f * g * (1.f + std::tanh(inner));
}

template <typename T>
void run(const GegluArgs& a, int64_t row_begin, int64_t row_end) {
  const auto* x = static_cast<const T*>(a.x);
  auto* out = static_cast<T*>(a.out);
  for (int64_t row = row_begin; row < row_end; ++row) {
    const T* xr = x + row_offset(a.x_layout, row);
    T* o = out + row * a.n;
    for (int64_t i = 0; i < a.n; ++i) {
      const float y = a.gated ? to_float(xr[i]) * gelu(to_float(xr[a.n + i]), a.act) : gelu(to_float(xr[i]), a.act);
      o[i] = from_float<T>(y);
    }
  }
}

}  // namespace

void geglu_cpu(const GegluArgs& a, int64_t row_begin, int64_t row_end) {
  dispatch(a.dtype, [&]<typename T>() { run<T>(a, row_begin, row_end); });
}

}  // namespace khub_kernels::geglu
