// RoPE table-mode q + k workloads, plain and fused with the q / k RMSNorm.
#pragma once
#include "copies.cuh"

namespace probe {

// ---- Probe kernel (session 19): U consecutive tokens a 128-thread group, every token's q and k
// loads issued (ldg_now: where they stand) before the first token's reduction, so the later tokens'
// loads are in flight while the earlier ones reduce and store. Lean rows only (n == G x CH x V), T
// weights, Table trig (Op::Row's fetch / store_t_weight).
template <typename Op, int G, int CH, int U, int MinBlocks>
__global__ void __launch_bounds__(G, MinBlocks) rope_token_multi_kernel(const Op op, int64_t tokens, float eps) {
  namespace kc = khub_kernels::cuda;
  using T = typename Op::T;
  using Row = typename Op::Row;
  constexpr int V = 16 / sizeof(T);
  constexpr int N = G * CH * V;
  using Pre = typename Row::template Pre<V>;
  kc::wait_for_previous_grid();
  __shared__ float scratch[U][2 * (G / 32)];
  const int lane = threadIdx.x;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * U;
  kc::Pack16<T> pk[U][2][CH];
  Row rows[U][2];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (base + u >= tokens) break;
    op.template token_rows<true>(base + u, rows[u][0], rows[u][1]);
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int c = 0; c < CH; ++c) pk[u][j][c].u = kc::ldg_now(rows[u][j].x + (c * G + lane) * V);
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const bool active = base + u < tokens;  // the same for the whole group: the barrier is safe
    if (!active) break;
    Pre pre[CH];
#pragma unroll
    for (int c = 0; c < CH; ++c) rows[u][0].template fetch<V>((c * G + lane) * V, pre[c]);
    float ss[2] = {0.f, 0.f};
    kc::add_squares<G>(pk[u][0], lane, N, ss[0]);
    kc::add_squares<G>(pk[u][1], lane, N, ss[1]);
    kc::group_sum<G, 2>(ss, scratch[u]);
    constexpr float inv_n = 1.f / N;
    const float r[2] = {rsqrtf(ss[0] * inv_n + eps), rsqrtf(ss[1] * inv_n + eps)};
#pragma unroll
    for (int c = 0; c < CH; ++c) {
      const int idx = (c * G + lane) * V;
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        float v[V];
        kc::unpack16<T>(pk[u][j][c].u, v);
        rows[u][j].template store_t_weight<V>(idx, v, r[j], pre[c]);
      }
    }
  }
}

template <int G, int CH, int U, int MinBlocks, typename Op>
cudaError_t launch_rope_token_multi(const Op& op, int64_t tokens, int n, float eps, cudaStream_t stream) {
  constexpr int V = 16 / static_cast<int>(sizeof(typename Op::T));
  if (n != G * CH * V) return cudaErrorInvalidValue;
  Op lean = op;
  lean.t.seq_div = khub_kernels::make_fast_div(static_cast<uint32_t>(op.t.seq));
  const int64_t blocks = (tokens + U - 1) / U;
  return khub_kernels::cuda::launch(rope_token_multi_kernel<Op, G, CH, U, MinBlocks>, dim3(static_cast<unsigned>(blocks)),
                                    dim3(G), stream, lean, tokens, eps);
}

// ---- RoPE table mode q + k ------------------------------------------------------------------------
// TorchLayout: q / k rows as the torch binding describes [B, S, D] (outer blocks of S rows, so the
// rows of samples >= 1 take a division), not as one flat block of rows.
template <bool Norm, bool TorchLayout = false, bool Cold = false>
inline Workload rope_table(int64_t b, int64_t fr, int64_t h, int64_t wd) {
  namespace r3 = khub_kernels::rope3d;
  Workload w;
  const int d = 2048, f = d / 6;
  const int64_t s = fr * h * wd, tokens = b * s;
  w.op = Norm ? "rms_rope_table_qk" : "rope_table_qk";
  w.shape = dims({b, s, d}) + "x2" + (TorchLayout ? " torch layout" : "") + cold_suffix(Cold);
  w.bytes = 8.0 * tokens * d;
  w.sets = sets_for(w.bytes);
  // Tables: P = fr + h + w rows of f, filled with cos/sin of arbitrary angles; index [1, S, 3].
  const int64_t P = fr + h + wd;
  std::vector<float> ct(P * f), st(P * f);
  for (int64_t i = 0; i < P * f; ++i) {
    ct[i] = std::cos(0.37 * i);
    st[i] = std::sin(0.37 * i);
  }
  std::vector<int32_t> idx(s * 3);
  for (int64_t t = 0; t < s; ++t) {
    idx[3 * t] = int32_t(t / (h * wd));
    idx[3 * t + 1] = int32_t(fr + (t / wd) % h);
    idx[3 * t + 2] = int32_t(fr + h + t % wd);
  }
  auto upload = [&](const auto& host) {
    using E = typename std::decay_t<decltype(host)>::value_type;
    std::vector<E*> v(w.sets, nullptr);
    for (int i = 0; i < w.sets; ++i) {
      if (!Cold && i > 0) {
        v[i] = v[0];
        continue;
      }
      CHECK(dev_alloc(&v[i], host.size() * sizeof(E)));
      CHECK(cudaMemcpy(v[i], host.data(), host.size() * sizeof(E), cudaMemcpyHostToDevice));
    }
    return v;
  };
  std::vector<float> cst(2 * P * f);  // the Packed layout: cos and sin interleaved
  for (int64_t i = 0; i < P * f; ++i) {
    cst[2 * i] = ct[i];
    cst[2 * i + 1] = st[i];
  }
  const auto dct = upload(ct), dst = upload(st), dcst = upload(cst);
  const auto didx = upload(idx);
  const auto wq = small_operand<bf16>(Cold, w.sets, d, 11, 0.1f, 1.f);
  const auto wk = small_operand<bf16>(Cold, w.sets, d, 12, 0.1f, 1.f);
  const auto qs = fills(w.sets, tokens * d, 300), ks = fills(w.sets, tokens * d, 400);
  const auto qo = fills(kGraphCalls, tokens * d, 1), ko = fills(kGraphCalls, tokens * d, 2);
  w.outputs.push_back(output_of<bf16>(qo[0], tokens * d));
  w.outputs.push_back(output_of<bf16>(ko[0], tokens * d));
  const RowLayout xl = TorchLayout ? RowLayout{tokens, s, s * d, d} : RowLayout{tokens, tokens, 0, d};
  auto args = [=](int i, int o) {
    r3::RopeArgs a;
    a.dtype = khub_kernels::DType::BF16;
    a.q = qs[i];
    a.k = ks[i];
    a.q_layout = xl;
    a.k_layout = xl;
    a.q_out = qo[o];
    a.k_out = ko[o];
    a.d = d;
    a.trig.mode = r3::TrigMode::Table;
    a.trig.stride_b = 0;
    a.trig.stride_s = 3;
    a.trig.seq = s;
    a.trig.f = f;
    a.trig.pad_pairs = (d % 6) / 2;
    a.trig.cos_table = dct[i];
    a.trig.sin_table = dst[i];
    a.trig.index = didx[i];
    a.norm = Norm;
    a.q_weight = Norm ? wq[i] : nullptr;
    a.k_weight = Norm ? wk[i] : nullptr;
    a.eps = 1e-5f;
    return a;
  };

  w.candidates.push_back({"shipped", [=](int i, int o) { CHECK(r3::launch_rope3d(args(i, o), true, g_stream)); }});
  add_copies(w);
  using Op = r3::RopeRowOp<bf16, Norm, r3::TrigMode::Table>;
  auto op = [=](int i, int o) {
    const auto a = args(i, o);
    return Op{qs[i], xl, ks[i], xl, qo[o], ko[o], a.q_weight, a.k_weight, false, d, a.trig};
  };
  // The same op reading the Packed tables (session 19).
  auto packed = [=](auto op_of) {
    return [=](int i, int o) {
      auto p = op_of(i, o);
      p.t.cos_table = dcst[i];
      p.t.sin_table = dcst[i] + 1;
      return p;
    };
  };
  auto add = [&](const char* name, Call c) { w.candidates.push_back({name, c}); };
  if constexpr (Norm) {
    // One group per token (q and k rows together, trig fetched once); "stream": cache-streaming
    // stores; "samples2": the tokens at one position of two samples in one group (shared trig).
    using OpS = r3::RopeRowOp<bf16, true, r3::TrigMode::Table, true>;
    auto op_stream = [=](int i, int o) {
      const Op p = op(i, o);
      return OpS{p.q, p.ql, p.k, p.kl, p.qo, p.ko, p.qw, p.kw, p.w_f32, p.d, p.t};
    };
    auto token = [&](const char* name, auto launch) {
      add(name, [=](int i, int o) { CHECK(launch(op(i, o), tokens, d, 1e-5f, g_stream)); });
    };
    auto token_stream = [&](const char* name, auto launch) {
      add(name, [=](int i, int o) { CHECK(launch(op_stream(i, o), tokens, d, 1e-5f, g_stream)); });
    };
    // Earlier candidates (weights first, two samples a group, other budgets, L2 prefetch) lost and
    // left the probe. Re-sweep after unpack16 / keep_packed: the shipped G128 x 2 at 1024
    // threads/SM.
    token_stream("token T weight G128 CH2 MinB6", r3::launch_rope_token<128, 2, 6, true, OpS>);
    token_stream("token T weight G128 CH2 MinB10", r3::launch_rope_token<128, 2, 10, true, OpS>);
    token_stream("token T weight G256 CH1 MinB8", r3::launch_rope_token<256, 1, 8, true, OpS>);
    token_stream("token T weight G64 CH4 MinB12", r3::launch_rope_token<64, 4, 12, true, OpS>);
    token_stream("token T weight G128 CH2 MinB8 (before Lean)", r3::launch_rope_token<128, 2, 8, true, OpS>);
    // q and k loads allocating in L1 (not yet run).
    token_stream("token T weight G128 CH2 MinB8 L1 keep", r3::launch_rope_token<128, 2, 8, true, OpS, true>);
    // Lean (shipped): the token's (b, s) by one multiply-high division
    // reused for both rows' offsets, no per-chunk bounds checks, the mean by a constant multiply;
    // the kernel shipped before it between its two runs.
    token_stream("token T weight G128 CH2 MinB8 lean", r3::launch_rope_token<128, 2, 8, true, OpS, false, true>);
    token_stream("token T weight G128 CH2 MinB8 (before Lean), 2", r3::launch_rope_token<128, 2, 8, true, OpS>);
    token_stream("token T weight G128 CH2 MinB8 lean, 2", r3::launch_rope_token<128, 2, 8, true, OpS, false, true>);
    // Lean at other group sizes, since every thread of a group repeats the
    // token's offsets and trig rows. 64 x 4 read 28.4-29.9 us (spilling at MinB12), 256 x 1 30.7-30.9,
    // against 27.3-27.6 for 128 x 2. Lean 128 x 2 at 1280 or 1536 threads/SM spills (40, 136 bytes).
    token_stream("token T weight G64 CH4 MinB12 lean", r3::launch_rope_token<64, 4, 12, true, OpS, false, true>);
    token_stream("token T weight G64 CH4 MinB10 lean", r3::launch_rope_token<64, 4, 10, true, OpS, false, true>);
    token_stream("token T weight G64 CH4 MinB8 lean", r3::launch_rope_token<64, 4, 8, true, OpS, false, true>);
    token_stream("token T weight G256 CH1 MinB4 lean", r3::launch_rope_token<256, 1, 4, true, OpS, false, true>);
    // Packed: cos / sin interleaved in one table (one 8-byte gather a pair instead of two 4-byte
    // ones; ncu: 16 of a thread's 27 global loads were the scalar gathers).
    using OpSP = r3::RopeRowOp<bf16, true, r3::TrigMode::Table, true, true>;
    const auto op_sp = packed([=](int i, int o) {
      const Op p = op(i, o);
      return OpSP{p.q, p.ql, p.k, p.kl, p.qo, p.ko, p.qw, p.kw, p.w_f32, p.d, p.t};
    });
    auto token_packed = [&](const char* name, auto launch) {
      add(name, [=](int i, int o) { CHECK(launch(op_sp(i, o), tokens, d, 1e-5f, g_stream)); });
    };
    token_packed("token T weight G128 CH2 MinB8 lean packed", r3::launch_rope_token<128, 2, 8, true, OpSP, false, true>);
    token_packed("token T weight G128 CH2 MinB10 lean packed", r3::launch_rope_token<128, 2, 10, true, OpSP, false, true>);
    token_packed("token T weight G64 CH4 MinB10 lean packed", r3::launch_rope_token<64, 4, 10, true, OpSP, false, true>);
    token_stream("token T weight G128 CH2 MinB8 lean, 3", r3::launch_rope_token<128, 2, 8, true, OpS, false, true>);
    token_packed("token T weight G128 CH2 MinB8 lean packed, 2", r3::launch_rope_token<128, 2, 8, true, OpSP, false, true>);
    // A warp a token: no barrier across warps before a token's stores, and at 384-512 threads/SM
    // 12-16 tokens in flight against the shipped kernel's 8.
    token_packed("token T weight G32 CH8 MinB4 lean packed", r3::launch_rope_token<32, 8, 4, true, OpSP, false, true>);
    token_packed("token T weight G32 CH8 MinB3 lean packed", r3::launch_rope_token<32, 8, 3, true, OpSP, false, true>);
    token_stream("token T weight G32 CH8 MinB4 lean", r3::launch_rope_token<32, 8, 4, true, OpS, false, true>);
    token_stream("token T weight G32 CH8 MinB3 lean", r3::launch_rope_token<32, 8, 3, true, OpS, false, true>);
    token_packed("token T weight G64 CH4 MinB6 lean packed", r3::launch_rope_token<64, 4, 6, true, OpSP, false, true>);
    // Two and three tokens a group, all their loads issued first (rope_token_multi_kernel).
    token_stream("multi U2 G128 CH2 MinB6", launch_rope_token_multi<128, 2, 2, 6, OpS>);
    token_stream("multi U2 G128 CH2 MinB5", launch_rope_token_multi<128, 2, 2, 5, OpS>);
    token_packed("multi U2 G128 CH2 MinB6 packed", launch_rope_token_multi<128, 2, 2, 6, OpSP>);
    token_stream("multi U2 G128 CH2 MinB8", launch_rope_token_multi<128, 2, 2, 8, OpS>);
    token_stream("multi U3 G128 CH2 MinB4", launch_rope_token_multi<128, 2, 3, 4, OpS>);
    token_stream("token T weight G128 CH2 MinB8 lean, 4", r3::launch_rope_token<128, 2, 8, true, OpS, false, true>);
  } else {
    // The shipped kernel takes one group per token (q and k together, trig fetched once).
    auto token = [&](const char* name, auto launch) {
      add(name, [=](int i, int o) { CHECK(launch(op(i, o), tokens, d, 0.f, g_stream)); });
    };
    // The row engine's configuration from before the per-token kernel, and the other token
    // configurations measured.
    token("token G128 CH2 MinB10", r3::launch_rope_token<128, 2, 10, false, Op>);
    token("token G128 CH2 MinB16", r3::launch_rope_token<128, 2, 16, false, Op>);
    token("token G256 CH1 MinB6", r3::launch_rope_token<256, 1, 6, false, Op>);
    token("token G256 CH1 MinB8 L1 keep", r3::launch_rope_token<256, 1, 8, false, Op, true>);
    token("token G256 CH1 MinB6 L1 keep", r3::launch_rope_token<256, 1, 6, false, Op, true>);
    // Lean (level with the shipped kernel here, 26.24 vs 26.21 us, so not shipped): the
    // token's (b, s) by one multiply-high division reused for both rows' offsets; the shipped
    // configuration between its two runs.
    token("token G256 CH1 MinB8 lean", r3::launch_rope_token<256, 1, 8, false, Op, false, true>);
    token("token G256 CH1 MinB8", r3::launch_rope_token<256, 1, 8, false, Op>);
    token("token G256 CH1 MinB8 lean, 2", r3::launch_rope_token<256, 1, 8, false, Op, false, true>);
    // The Packed tables.
    using OpP = r3::RopeRowOp<bf16, false, r3::TrigMode::Table, true, true>;
    const auto op_p = packed([=](int i, int o) {
      const Op p = op(i, o);
      return OpP{p.q, p.ql, p.k, p.kl, p.qo, p.ko, p.qw, p.kw, p.w_f32, p.d, p.t};
    });
    auto token_packed = [&](const char* name, auto launch) {
      add(name, [=](int i, int o) { CHECK(launch(op_p(i, o), tokens, d, 0.f, g_stream)); });
    };
    token_packed("token G256 CH1 MinB8 packed", r3::launch_rope_token<256, 1, 8, false, OpP>);
    token_packed("token G256 CH1 MinB8 lean packed", r3::launch_rope_token<256, 1, 8, false, OpP, false, true>);
    token("token G256 CH1 MinB8, 2", r3::launch_rope_token<256, 1, 8, false, Op>);
  }
  return w;
}

}  // namespace probe
