// GEGLU / GELU-tanh workloads: the shipped launcher against other unrolls, orders and reads.
#pragma once
#include "copies.cuh"
#include "inductor.cuh"

namespace probe {

// ---- GEGLU / GELU-tanh ----------------------------------------------------------------------------
// The shipped GEGLU kernel at another unroll (vectors per thread) and block size.
template <typename T, int U, khub_kernels::geglu::Act A, bool Gated, bool TileX, bool L1Keep = false>
inline cudaError_t geglu_direct(const khub_kernels::geglu::GegluArgs& a, int threads, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  const unsigned rows = unsigned(a.x_layout.rows), tiles = unsigned(((a.n + V - 1) / V + threads * U - 1) / (threads * U));
  return kc::launch(khub_kernels::geglu::geglu_kernel<T, V, U, A, Gated, TileX, L1Keep>,
                    TileX ? dim3(tiles, rows) : dim3(rows, tiles), dim3(threads), stream, static_cast<const T*>(a.x),
                    a.x_layout, static_cast<T*>(a.out), a.n);
}

template <typename T, khub_kernels::geglu::Act A, bool Gated>
inline Workload geglu(int64_t b, int64_t s, int64_t n) {
  namespace gg = khub_kernels::geglu;
  Workload w;
  const int64_t rows = b * s, in = Gated ? 2 * n : n;
  w.op = Gated ? "geglu" : "gelu_tanh";
  w.shape = dims({b, s, in}) + dtype_suffix<T>();
  w.bytes = double(sizeof(T)) * rows * (in + n);
  w.sets = sets_for(w.bytes);
  const auto xs = fills<T>(w.sets, rows * in, 500);
  const auto outs = fills<T>(kGraphCalls, rows * n, 1);
  w.outputs.push_back(output_of<T>(outs[0], rows * n));
  auto args = [=](int i, int o) {
    gg::GegluArgs a;
    a.dtype = dtype_of<T>();
    a.x = xs[i];
    a.x_layout = RowLayout{rows, rows, 0, in};
    a.out = outs[o];
    a.n = n;
    a.gated = Gated;
    a.act = A;
    return a;
  };
  w.candidates.push_back({"shipped", [=](int i, int o) { CHECK(gg::launch_geglu(args(i, o), true, g_stream)); }});
  add_copies(w);
  // torch.compile's own kernel (probe --inductor) for the eager formulas baselines.py compiles:
  // GEGLU with the exact GELU, GELU-tanh alone.
  if constexpr ((Gated && A == gg::Act::GeluErf) || (!Gated && A == gg::Act::GeluTanh)) {
    if (const InductorKernel ik = load_inductor(inductor_tag<T>(w.op, dims({b, s, in}))); ik.fn) {
      const Call call = [=](int i, int o) { launch_inductor(ik, {xs[i], outs[o]}); };
      w.candidates.push_back({"inductor (torch.compile's kernel)", call});
      w.tail.push_back({"inductor (torch.compile's kernel), 2", call});
    }
  }
  w.candidates.push_back({"shipped, no PDL", no_pdl(w.candidates[0].second)});
  auto direct = [&](const char* name, auto launch, int threads) {
    w.candidates.push_back({name, [=](int i, int o) { CHECK(launch(args(i, o), threads, g_stream)); }});
  };
  direct("U1 tiles in x", geglu_direct<T, 1, A, Gated, true>, 128);
  direct("U1 rows in x", geglu_direct<T, 1, A, Gated, false>, 128);
  direct("U2 tiles in x", geglu_direct<T, 2, A, Gated, true>, 128);
  direct("U2 rows in x", geglu_direct<T, 2, A, Gated, false>, 128);
  // Loads allocating in L1 (what sped up RMSNorm's and AdaLN's graph replay, where the input comes
  // from L2). GEGLU's outcome, in docs/kernels.md: 0.1 us faster in graph replay, 0.5-0.8 us slower
  // cold.
  direct("U1 tiles in x, L1 keep", geglu_direct<T, 1, A, Gated, true, true>, 128);
  direct("U2 tiles in x, L1 keep", geglu_direct<T, 2, A, Gated, true, true>, 128);
  // A copy-engine GEGLU (cp.async.bulk tiles of K rows into shared memory, 128 threads computing
  // from there) lost at every shape and dtype: [2,1024,4096] 11.5-13.6 / 6.9-10.1 us against
  // 10.7 / 6.2, [2,2688,16384] 67.4-74.7 against 66.7 (on the H200; branch exp/geglu-bulk).
  if constexpr (Gated) {
    const int64_t cols = n * int64_t(sizeof(T)) / 16;
    const auto pairs = fills<T>(kGraphCalls, rows * n, 3);
    w.candidates.push_back({"pair16 (GEGLU's reads and writes)", [=](int i, int o) {
                              pair_kernel<<<unsigned((rows * cols + 255) / 256), 256, 0, g_stream>>>(
                                  reinterpret_cast<const uint4*>(xs[i]), reinterpret_cast<uint4*>(pairs[o]), rows, cols);
                            }});
  }
  return w;
}

}  // namespace probe
