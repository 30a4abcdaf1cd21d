// AdaLN (table + temb) workloads: the shipped launcher against the engine and rows-kernel variants.
#pragma once
#include "copies.cuh"

namespace probe {

// ---- AdaLN (table + temb, T = 1) ------------------------------------------------------------------
template <typename T = bf16, bool Cold = false>
inline Workload adaln(int64_t b, int64_t s, int n) {
  Workload w;
  w.op = "adaln_rms_table";
  w.shape = dims({b, s, n}) + dtype_suffix<T>() + cold_suffix(Cold);
  const int64_t rows = b * s;
  w.bytes = 2.0 * sizeof(T) * rows * n;
  w.sets = sets_for(w.bytes);
  const auto tables = small_operand<T>(Cold, w.sets, 6 * n, 9, 0.1f);
  const auto tembs = small_operand<T>(Cold, w.sets, b * 6 * n, 10, 0.1f);
  auto mod = [=](int i, int chunk) {
    khub_kernels::ModSource m;
    m.table = tables[i] + chunk * n;
    m.base = tembs[i] + chunk * n;
    m.stride_b = 6 * n;
    m.stride_s = 0;
    return m;
  };
  const auto xs = fills<T>(w.sets, rows * n, 200);
  const auto outs = fills<T>(kGraphCalls, rows * n, 1);
  w.outputs.push_back(output_of<T>(outs[0], rows * n));
  const RowLayout xl{rows, s, s * n, n};
  auto args = [=](int i, int o) {
    khub_kernels::adaln::AdaLnArgs a;
    a.dtype = dtype_of<T>();
    a.x = xs[i];
    a.x_layout = xl;
    a.scale = mod(i, 1);
    a.shift = mod(i, 0);
    a.out = outs[o];
    a.n = n;
    a.eps = 1e-6f;
    return a;
  };
  w.candidates.push_back({"shipped", [=](int i, int o) {
                            CHECK(khub_kernels::adaln::launch_adaln(args(i, o), true, g_stream));
                          }});
  add_copies(w);
  using Op = khub_kernels::adaln::AdaLnOp<T, false, true>;
  auto op = [=](int i, int o) {
    const auto a = args(i, o);
    return Op{xs[i], xl, nullptr, RowLayout{}, {}, a.scale, a.shift, outs[o], nullptr, n};
  };
  auto add = [&](const char* name, Call c) { w.candidates.push_back({name, c}); };
  // Earlier sweeps (group sizes, fetch orders, L2 prefetch, a kernel without the Row state, the
  // engine re-swept after unpack16) are not repeated here, nor R rows of one sample a group with
  // the modulation fetched at the stores (0.4-1.4 us slower); docs/kernels.md ("Performance on the
  // H200: what limits each kernel, what was tried", AdaLN) keeps their outcome.
  namespace ad = khub_kernels::adaln;
  auto rk = [&](const char* name, cudaError_t (*launch)(const ad::AdaLnArgs&, cudaStream_t)) {
    if (launch(args(0, 0), g_stream) == cudaErrorInvalidValue) return;  // R does not divide s
    add(name, [=](int i, int o) { CHECK(launch(args(i, o), g_stream)); });
  };
  constexpr int V = 16 / sizeof(T);
  if (n == 256 * V) {  // 16-bit rows of 2048, fp32 rows of 1024
    add("engine G128 CH2 (16-bit shipped before)", fast<Op, 128, 2, 12>(op, rows, n, 1e-6f));
    // Row and modulation loads bypassing L1 ("stream"; shipped with R4 from 8192 16-bit rows) or
    // kept there ("L1 keep"; shipped with R2 below that). Not repeated: x read at L1's default
    // policy (as evict_last) or evict_first (as bypassing).
    rk("rows G128 CH2 R2 MinB8 stream", ad::launch_rows<T, true, 128, 2, 2, 8>);
    rk("rows G128 CH2 R2 MinB8 L1 keep", ad::launch_rows<T, true, 128, 2, 2, 8, true>);
    rk("rows G128 CH2 R3 MinB5 stream", ad::launch_rows<T, true, 128, 2, 3, 5>);
    rk("rows G128 CH2 R4 MinB4 stream", ad::launch_rows<T, true, 128, 2, 4, 4>);
    rk("rows G128 CH2 R4 MinB4 L1 keep", ad::launch_rows<T, true, 128, 2, 4, 4, true>);
    rk("rows G128 CH2 R1 MinB12 L1 keep", ad::launch_rows<T, true, 128, 2, 1, 12, true>);
    rk("rows G128 CH2 R1 MinB16 L1 keep", ad::launch_rows<T, true, 128, 2, 1, 16, true>);
    rk("rows G128 CH2 R2 MinB6 L1 keep", ad::launch_rows<T, true, 128, 2, 2, 6, true>);
    rk("rows G128 CH2 R2 MinB10 L1 keep", ad::launch_rows<T, true, 128, 2, 2, 10, true>);
    rk("rows G128 CH2 R3 MinB5 L1 keep", ad::launch_rows<T, true, 128, 2, 3, 5, true>);
    rk("rows G128 CH2 R2 MinB8 L1 keep, 2", ad::launch_rows<T, true, 128, 2, 2, 8, true>);
  }
  if (n == 512 * V) {  // fp32 rows of 2048, 16-bit rows of 4096
    add("engine G256 CH2 MinB3", fast<Op, 256, 2, 3>(op, rows, n, 1e-6f));
    rk("rows G256 CH2 R2 MinB3", ad::launch_rows<T, true, 256, 2, 2, 3>);
    rk("rows G256 CH2 R2 MinB4", ad::launch_rows<T, true, 256, 2, 2, 4>);
    rk("rows G128 CH4 R2 MinB4", ad::launch_rows<T, true, 128, 4, 2, 4>);
    rk("rows G256 CH2 R4 MinB2", ad::launch_rows<T, true, 256, 2, 4, 2>);
  }
  if (n == 384 * V) {  // 16-bit rows of 3072
    add("engine G128 CH3 MinB6", fast<Op, 128, 3, 6>(op, rows, n, 1e-6f));
    rk("rows G128 CH3 R2 MinB4", ad::launch_rows<T, true, 128, 3, 2, 4>);
    rk("rows G128 CH3 R2 MinB6", ad::launch_rows<T, true, 128, 3, 2, 6>);
  }
  return w;
}

}  // namespace probe
