// RMSNorm and fused add + RMSNorm workloads: the shipped launcher against other kernels and groups.
#pragma once
#include "copies.cuh"
#include "inductor.cuh"
#include "inductor_mimic.cuh"

namespace probe {

// ---- RMSNorm, and the fused residual add + RMSNorm when Residual ----------------------------------
template <typename T, bool Residual, bool Cold = false>
inline Workload rms(int64_t rows, int n, std::string shape) {
  using RmsOp = khub_kernels::rmsnorm::RmsNormOp<T>;
  Workload w;
  w.op = Residual ? "fused_add_rms_norm" : "rms_norm";
  w.shape = shape + dtype_suffix<T>() + cold_suffix(Cold);
  w.bytes = ((Residual ? 4.0 : 2.0) * rows * n + n) * sizeof(T);
  w.sets = sets_for(w.bytes);
  const auto weights = small_operand<T>(Cold, w.sets, n, 7, 0.1f, 1.f);
  const auto xs = fills<T>(w.sets, rows * n, 100);
  const auto rs = Residual ? fills<T>(w.sets, rows * n, 600) : std::vector<T*>(w.sets, nullptr);
  const auto outs = fills<T>(kGraphCalls, rows * n, 1);
  const auto routs = Residual ? fills<T>(kGraphCalls, rows * n, 2) : std::vector<T*>(kGraphCalls, nullptr);
  w.outputs.push_back(output_of<T>(outs[0], rows * n));
  if (Residual) w.outputs.push_back(output_of<T>(routs[0], rows * n));
  const RowLayout xl{rows, rows, 0, n};
  auto args = [=](int i, int o) {
    khub_kernels::rmsnorm::RmsNormArgs a;
    a.dtype = dtype_of<T>();
    a.x = xs[i];
    a.x_layout = xl;
    a.residual = rs[i];
    a.residual_layout = xl;
    a.residual_out = routs[o];
    a.weight = weights[i];
    a.weight_dtype = dtype_of<T>();
    a.out = outs[o];
    a.n = n;
    a.eps = 1e-6f;
    return a;
  };
  auto op = [=](int i, int o) { return RmsOp{xs[i], xl, rs[i], xl, weights[i], false, outs[o], routs[o], n, {}}; };
  w.candidates.push_back({"shipped", [=](int i, int o) {
                            CHECK(khub_kernels::rmsnorm::launch_rms_norm(args(i, o), true, g_stream));
                          }});
  add_copies(w);
  auto add = [&](const char* name, Call c) { w.candidates.push_back({name, c}); };
  // torch.compile's own kernel for this case (probe --inductor), early and again near the end.
  if (const InductorKernel ik = load_inductor(inductor_tag<T>(w.op, shape)); ik.fn) {
    const Call call = [=](int i, int o) {
      if constexpr (Residual) launch_inductor(ik, {xs[i], rs[i], weights[i], outs[o], routs[o]});
      else launch_inductor(ik, {xs[i], weights[i], outs[o]});
    };
    add("inductor (torch.compile's kernel)", call);
    w.tail.push_back({"inductor (torch.compile's kernel), 2", call});
  }
  // Earlier sweeps (group sizes, fetch orders, fp32 3072 and q/k-head configurations, L2 prefetch of
  // the weight) are not repeated here (docs/kernels.md, "Performance on the H200: what limits each
  // kernel, what was tried", keeps their outcome).
  if constexpr (!Residual) {
    namespace rn = khub_kernels::rmsnorm;
    auto dedicated = [&](const char* name, auto launch) {
      add(name, [=](int i, int o) { CHECK(launch(xs[i], xl, weights[i], outs[o], n, 1e-6f, false, g_stream)); });
    };
    // Interleaved, so neither side gets the later (faster-measuring) slots only. "keep": the
    // one-pass dedicated kernel; "engine": the row engine; "reload": the two-pass kernel ("reload
    // L1": with RowRead::L1Keep). Earlier sweeps (several rows a group, plain stores, L1 / L2
    // priorities) are not repeated here.
    using RR = rn::RowRead;
    if constexpr (sizeof(T) == 2) {
      if (n == 2048) {
        add("engine G128 CH2 MinB12", fast<RmsOp, 128, 2, 12>(op, rows, n, 1e-6f));
        dedicated("keep G128 CH2 MinB12", rn::launch_keep<T, 128, 2, 12>);
        dedicated("keep G64 CH4 MinB12", rn::launch_keep<T, 64, 4, 12>);
        dedicated("keep G256 CH1 MinB8", rn::launch_keep<T, 256, 1, 8>);
        dedicated("reload G128 CH2 MinB16", rn::launch_reload<T, 128, 2, 16>);
        dedicated("keep G128 CH2 MinB16", rn::launch_keep<T, 128, 2, 16>);
        dedicated("reload L1 G128 CH2 MinB16", rn::launch_reload<T, 128, 2, 16, RR::L1Keep>);
        dedicated("keep L1 G128 CH2 MinB16", rn::launch_keep<T, 128, 2, 16, true>);
        dedicated("keep L1 G128 CH2 MinB12", rn::launch_keep<T, 128, 2, 12, true>);
        dedicated("keep L1 G128 CH2 MinB16 wfirst", rn::launch_keep<T, 128, 2, 16, true, true>);
        dedicated("keep G128 CH2 MinB12 wfirst", rn::launch_keep<T, 128, 2, 12, false, true>);
        dedicated("keep L1 G256 CH1 MinB8", rn::launch_keep<T, 256, 1, 8, true>);
        dedicated("keep G128 CH2 MinB12, 2", rn::launch_keep<T, 128, 2, 12>);
        dedicated("reload G128 CH2 MinB16, 2", rn::launch_reload<T, 128, 2, 16>);
      }
      if (n == 4096 && rows > 128) {
        add("engine G256 CH2 MinB6", fast<RmsOp, 256, 2, 6>(op, rows, n, 1e-6f));
        dedicated("keep G512 CH1 MinB4", rn::launch_keep<T, 512, 1, 4>);
        dedicated("keep G256 CH2 MinB8", rn::launch_keep<T, 256, 2, 8>);
        dedicated("reload G256 CH2 MinB8", rn::launch_reload<T, 256, 2, 8>);
        dedicated("keep G256 CH2 MinB6", rn::launch_keep<T, 256, 2, 6>);
        dedicated("keep G256 CH2 MinB6 wfirst", rn::launch_keep<T, 256, 2, 6, false, true>);
        dedicated("reload L1 G256 CH2 MinB8", rn::launch_reload<T, 256, 2, 8, RR::L1Keep>);
        dedicated("keep L1 G256 CH2 MinB8", rn::launch_keep<T, 256, 2, 8, true>);
        dedicated("keep L1 G512 CH1 MinB4", rn::launch_keep<T, 512, 1, 4, true>);
        dedicated("keep G256 CH2 MinB8 wfirst", rn::launch_keep<T, 256, 2, 8, false, true>);
        dedicated("keep G256 CH2 MinB8, 2", rn::launch_keep<T, 256, 2, 8>);
      }
      if (n == 4096 && rows <= 128) {
        // Few rows (decode): cold time is one DRAM round trip plus the reduction's chain.
        add("engine G512 CH1 MinB4 (shipped before ce454ac)", fast<RmsOp, 512, 1, 4>(op, rows, n, 1e-6f));
        dedicated("keep G512 CH1 MinB4", rn::launch_keep<T, 512, 1, 4>);
        dedicated("keep G256 CH2 MinB8", rn::launch_keep<T, 256, 2, 8>);
        dedicated("keep G128 CH4 MinB8", rn::launch_keep<T, 128, 4, 8>);
        dedicated("keep G64 CH8 MinB8", rn::launch_keep<T, 64, 8, 8>);
        add("engine G256 CH2 MinB6", fast<RmsOp, 256, 2, 6>(op, rows, n, 1e-6f));
        // The weight loaded with the row, before the reduction: one memory round trip, not two.
        dedicated("keep G512 CH1 MinB4 wfirst", rn::launch_keep<T, 512, 1, 4, false, true>);
        dedicated("keep G256 CH2 MinB8 wfirst", rn::launch_keep<T, 256, 2, 8, false, true>);
        dedicated("keep G512 CH1 MinB4, 2", rn::launch_keep<T, 512, 1, 4>);
        dedicated("keep G512 CH1 MinB4 wfirst, 2", rn::launch_keep<T, 512, 1, 4, false, true>);
        // After inductor's kernel for [1,128,4096] (as compile_code.py prints it: two passes, 512
        // threads a row, L1 + L2 evict-last then evict-first reads, plain stores), 0.1 us ahead
        // cold in baselines.py.
        dedicated("reload L1 L2 G512 CH1 MinB4 plain", rn::launch_reload<T, 512, 1, 4, RR::L1KeepL2Hint, false>);
        dedicated("keep G512 CH1 MinB4 plain", rn::launch_keep<T, 512, 1, 4, false, false, false>);
        dedicated("keep G512 CH1 MinB4 wfirst plain", rn::launch_keep<T, 512, 1, 4, false, true, false>);
        dedicated("keep G512 CH1 MinB4, 3", rn::launch_keep<T, 512, 1, 4>);
      }
      if (n == 3072) {
        add("engine G128 CH4 MinB6", fast<RmsOp, 128, 4, 6>(op, rows, n, 1e-6f));
        dedicated("keep G128 CH3 MinB8", rn::launch_keep<T, 128, 3, 8>);
        dedicated("keep G128 CH3 MinB8 wfirst", rn::launch_keep<T, 128, 3, 8, false, true>);
        dedicated("keep G128 CH3 MinB8, 2", rn::launch_keep<T, 128, 3, 8>);
      }
      if (n == 128) {
        add("engine G8 CH2 MinB6", fast<RmsOp, 8, 2, 6>(op, rows, n, 1e-6f));
        dedicated("keep G8 CH2 MinB6", rn::launch_keep<T, 8, 2, 6>);
        dedicated("keep G8 CH2 MinB8", rn::launch_keep<T, 8, 2, 8>);
        dedicated("keep G16 CH1 MinB8", rn::launch_keep<T, 16, 1, 8>);
        dedicated("keep G16 CH1 MinB12", rn::launch_keep<T, 16, 1, 12>);
        dedicated("keep G16 CH1 MinB8 wfirst", rn::launch_keep<T, 16, 1, 8, false, true>);
        dedicated("keep L1 G16 CH1 MinB8", rn::launch_keep<T, 16, 1, 8, true>);
        dedicated("keep L1 G8 CH2 MinB8", rn::launch_keep<T, 8, 2, 8, true>);
        dedicated("keep G8 CH2 MinB6, 2", rn::launch_keep<T, 8, 2, 6>);
      }
    } else {
      if (n == 128) {
        add("engine G16 CH2 MinB6", fast<RmsOp, 16, 2, 6>(op, rows, n, 1e-6f));
        dedicated("keep G16 CH2 MinB6", rn::launch_keep<T, 16, 2, 6>);
        dedicated("keep G16 CH2 MinB6 wfirst", rn::launch_keep<T, 16, 2, 6, false, true>);
        dedicated("keep G16 CH2 MinB6, 2", rn::launch_keep<T, 16, 2, 6>);
      }
      if (n == 2048) {
        add("engine G256 CH2 MinB6", fast<RmsOp, 256, 2, 6>(op, rows, n, 1e-6f));
        dedicated("keep G256 CH2 MinB6", rn::launch_keep<T, 256, 2, 6>);
        dedicated("reload L1 L2 G256 CH2 MinB8", rn::launch_reload<T, 256, 2, 8, RR::L1KeepL2Hint>);
        dedicated("reload L1 L2 G256 CH2 MinB6", rn::launch_reload<T, 256, 2, 6, RR::L1KeepL2Hint>);
        dedicated("reload hint G256 CH2 MinB8", rn::launch_reload<T, 256, 2, 8, RR::L2Hint>);
        dedicated("reload L1 G256 CH2 MinB8", rn::launch_reload<T, 256, 2, 8, RR::L1Keep>);
        dedicated("keep G256 CH2 MinB8", rn::launch_keep<T, 256, 2, 8>);
        dedicated("keep G128 CH4 MinB6", rn::launch_keep<T, 128, 4, 6>);
        dedicated("keep G256 CH2 MinB6 wfirst", rn::launch_keep<T, 256, 2, 6, false, true>);
        // After inductor's kernel for this shape (as compile_code.py prints it: two passes, 512
        // threads with two rows, 25 registers so 2048 threads/SM, L1 + L2 evict-last then
        // evict-first reads, plain stores), which runs 0.5 us ahead cold in baselines.py.
        dedicated("reload L1 L2 G256 CH2 MinB8 plain", rn::launch_reload<T, 256, 2, 8, RR::L1KeepL2Hint, false>);
        dedicated("keep G256 CH2 MinB6 wfirst plain", rn::launch_keep<T, 256, 2, 6, false, true, false>);
        dedicated("keep G256 CH2 MinB8 wfirst", rn::launch_keep<T, 256, 2, 8, false, true>);
        dedicated("keep G512 CH1 MinB4 wfirst", rn::launch_keep<T, 512, 1, 4, false, true>);
        dedicated("keep G256 CH2 MinB6 wfirst, 2", rn::launch_keep<T, 256, 2, 6, false, true>);
        dedicated("keep G256 CH2 MinB6, 2", rn::launch_keep<T, 256, 2, 6>);
      }
      if (n == 3072) {
        dedicated("reload hint G256 CH3 MinB6 (before)", rn::launch_reload<T, 256, 3, 6, RR::L2Hint>);
        dedicated("reload L1 L2 G256 CH3 MinB6", rn::launch_reload<T, 256, 3, 6, RR::L1KeepL2Hint>);
        // Inductor's kernel read 0.6-0.8 us ahead cold in the probe: two passes, 512
        // threads a row, a 2048-element block (the second one half masked), plain stores.
        for (const std::string round : {"", ", 2"}) {
          dedicated(("reload L1 L2 G512 CH2 MinB4 plain" + round).c_str(),
                    rn::launch_reload<T, 512, 2, 4, RR::L1KeepL2Hint, false>);
          dedicated(("reload L1 L2 G512 CH2 MinB4" + round).c_str(), rn::launch_reload<T, 512, 2, 4, RR::L1KeepL2Hint>);
          dedicated(("reload L1 L2 G256 CH3 MinB6 plain" + round).c_str(),
                    rn::launch_reload<T, 256, 3, 6, RR::L1KeepL2Hint, false>);
          dedicated(("reload L1 L2 G1024 CH1 MinB2 plain" + round).c_str(),
                    rn::launch_reload<T, 1024, 1, 2, RR::L1KeepL2Hint, false>);
        }
        // The weight loaded L1 / L2 evict-last, as inductor loads it; n and the row offset
        // compile-time (n3072), as in inductor's shape-specialised kernel; and the shipped kernel
        // launched without PDL (inductor's kernel has no griddepcontrol). On the H200 each read
        // within 0.3 us of the shipped kernel cold: none closes inductor's 0.5 us lead.
        for (const std::string round : {"", ", 2"}) {
          dedicated(("reload L1 L2 G256 CH3 MinB6 wkeep" + round).c_str(),
                    rn::launch_reload<T, 256, 3, 6, RR::L1KeepL2Hint, true, true>);
          dedicated(("reload L1 L2 G256 CH3 MinB6 n3072" + round).c_str(),
                    rn::launch_reload<T, 256, 3, 6, RR::L1KeepL2Hint, true, false, 3072>);
          dedicated(("reload L1 L2 G256 CH3 MinB6 wkeep n3072" + round).c_str(),
                    rn::launch_reload<T, 256, 3, 6, RR::L1KeepL2Hint, true, true, 3072>);
          add(("reload L1 L2 G256 CH3 MinB6 no PDL" + round).c_str(), no_pdl([=](int i, int o) {
                CHECK((rn::launch_reload<T, 256, 3, 6, RR::L1KeepL2Hint>(xs[i], xl, weights[i], outs[o], n, 1e-6f,
                                                                         false, g_stream)));
              }));
        }
        // Inductor's kernel transcribed (inductor_mimic.cuh): which part of its schedule puts it
        // ahead of copy16. It did not tell: the transcription ran slower (docs/kernels.md,
        // RMSNorm).
        auto mimic = [&](const char* name, auto kernel, int g, bool pdl) {
          add(name, [=](int i, int o) {
            if (pdl) CHECK(kc::launch(kernel, dim3(unsigned(rows)), dim3(unsigned(g)), g_stream, xs[i], weights[i],
                                      outs[o], n, 1e-6f));
            else {
              kernel<<<unsigned(rows), g, 0, g_stream>>>(xs[i], weights[i], outs[o], n, 1e-6f);
              CHECK(cudaGetLastError());
            }
          });
        };
        if constexpr (std::is_same_v<T, float>)
          for (const std::string round : {"", ", 2"}) {
            mimic(("mimic G512 CH2" + round).c_str(), probe_mimic::rms_mimic<512, 2, false, false>, 512, false);
            mimic(("mimic G512 CH2 nc" + round).c_str(), probe_mimic::rms_mimic<512, 2, true, false>, 512, false);
            mimic(("mimic G512 CH2 PDL" + round).c_str(), probe_mimic::rms_mimic<512, 2, false, true>, 512, true);
            mimic(("mimic G256 CH3" + round).c_str(), probe_mimic::rms_mimic<256, 3, false, false>, 256, false);
            mimic(("mimic G256 CH3 nc" + round).c_str(), probe_mimic::rms_mimic<256, 3, true, false>, 256, false);
            mimic(("mimic G256 CH3 PDL" + round).c_str(), probe_mimic::rms_mimic<256, 3, false, true>, 256, true);
            mimic(("mimic G1024 CH1" + round).c_str(), probe_mimic::rms_mimic<1024, 1, false, false>, 1024, false);
          }
        // Call 134: the transcription ran 2.5 us behind inductor's cubin at its layout; its SASS has
        // n compile-time (predicates, no division) and chunk 0's second-pass loads before the rsqrt.
        if constexpr (std::is_same_v<T, float>)
          for (const std::string round : {"", ", 2"}) {
            mimic(("mimic G512 CH2 n3072" + round).c_str(), probe_mimic::rms_mimic<512, 2, false, false, 3072>, 512,
                  false);
            mimic(("mimic G512 CH2 n3072 hoist1" + round).c_str(),
                  probe_mimic::rms_mimic<512, 2, false, false, 3072, 1>, 512, false);
            mimic(("mimic G512 CH2 n3072 hoist2" + round).c_str(),
                  probe_mimic::rms_mimic<512, 2, false, false, 3072, 2>, 512, false);
            mimic(("mimic G256 CH3 n3072" + round).c_str(), probe_mimic::rms_mimic<256, 3, false, false, 3072>, 256,
                  false);
            mimic(("mimic G256 CH3 n3072 hoist1" + round).c_str(),
                  probe_mimic::rms_mimic<256, 3, false, false, 3072, 1>, 256, false);
            mimic(("mimic G256 CH3 n3072 hoist3" + round).c_str(),
                  probe_mimic::rms_mimic<256, 3, false, false, 3072, 3>, 256, false);
            mimic(("mimic G256 CH3 n3072 hoist3 PDL" + round).c_str(),
                  probe_mimic::rms_mimic<256, 3, false, true, 3072, 3>, 256, true);
          }
      }
    }
  } else {
    // The fused add (Residual) against the shipped launcher: the keep kernel for rows of 2048
    // (any number of 16-bit rows, plain stores up to 256); for 16-bit rows of 4096 the two-pass
    // kernel from 2048 rows, the keep kernel below; for fp32 rows of 4096 the keep kernel from 2048
    // rows, the two-pass kernel from 4096 (rmsnorm.cu has the measurements).
    namespace rn = khub_kernels::rmsnorm;
    using RR = rn::RowRead;
    auto add_keep = [&](const char* name, auto launch) {
      add(name, [=](int i, int o) { CHECK(launch(args(i, o), g_stream)); });
    };
    // Every candidate body adds, twice in turn (", 2" the second time), as the later slots read faster.
    auto twice = [&](auto body) {
      for (const char* round : {"", ", 2"})
        body([&](const char* name, auto launch) { add_keep((std::string(name) + round).c_str(), launch); });
    };
    if constexpr (sizeof(T) == 2) {
      if (n == 4096) {
        // Call 119: every keep configuration read level with the row engine, 0.3-0.5 us behind
        // torch.compile cold at [1,2048,4096] and 2-3 us at [1,8192,4096]. Call 120: the two-pass
        // kernel recomputing s from x and the residual re-read from L1 / L2 (inductor's schedule: 512
        // threads a row) reached 67.7 us at [1,8192,4096].
        twice([&](auto in_turn) {
          in_turn("add reload G512 CH1 MinB4 L1L2 recompute plain",
                  rn::launch_add_reload<T, 512, 1, 4, RR::L1KeepL2Hint, false, true>);
          in_turn("add reload G512 CH1 MinB4 L1L2 recompute",
                  rn::launch_add_reload<T, 512, 1, 4, RR::L1KeepL2Hint, true, true>);
          in_turn("add reload G256 CH2 MinB8 L1L2 recompute",
                  rn::launch_add_reload<T, 256, 2, 8, RR::L1KeepL2Hint, true, true>);
          in_turn("add reload G256 CH2 MinB8 L1L2 recompute plain",
                  rn::launch_add_reload<T, 256, 2, 8, RR::L1KeepL2Hint, false, true>);
          in_turn("add keep G256 CH2 MinB8 wfirst", rn::launch_add_keep<T, 256, 2, 8>);
          if (rows <= 128) {
            in_turn("add keep G128 CH4 MinB8 wfirst", rn::launch_add_keep<T, 128, 4, 8>);
            in_turn("add keep G512 CH1 MinB4", rn::launch_add_keep<T, 512, 1, 4, false>);
          }
        });
      }
    }
    if constexpr (sizeof(T) == 4) {
      if (n == 4096) {
        // fp32 rows of 4096: the two-pass and keep kernels against the row engine.
        twice([&](auto in_turn) {
          in_turn("add reload G512 CH2 MinB4 L1L2 recompute",
                  rn::launch_add_reload<T, 512, 2, 4, RR::L1KeepL2Hint, true, true>);
          in_turn("add reload G1024 CH1 MinB2 L1L2 recompute",
                  rn::launch_add_reload<T, 1024, 1, 2, RR::L1KeepL2Hint, true, true>);
          in_turn("add keep G512 CH2 MinB4 wfirst", rn::launch_add_keep<T, 512, 2, 4>);
          // 32 bytes of spills (ptxas): the keep kernel's register budget at 1536 threads/SM.
          in_turn("add keep G256 CH4 MinB6 wfirst", rn::launch_add_keep<T, 256, 4, 6>);
        });
      }
    }
    if (n != 2048) return w;
    if constexpr (sizeof(T) == 2) {
      if (rows < 2048) {
        // Fewer rows of 2048 (on the row engine until they moved to the keep kernel): the two-pass
        // kernel against the keep kernel below.
        add_keep("add reload G128 CH2 MinB12 L1L2 recompute",
                 rn::launch_add_reload<T, 128, 2, 12, RR::L1KeepL2Hint, true, true>);
        add_keep("add reload G256 CH1 MinB8 L1L2 recompute",
                 rn::launch_add_reload<T, 256, 1, 8, RR::L1KeepL2Hint, true, true>);
      }
      add_keep("add keep G128 CH2 MinB12 wfirst", rn::launch_add_keep<T, 128, 2, 12>);
      add_keep("add keep G128 CH2 MinB8 wfirst", rn::launch_add_keep<T, 128, 2, 8>);
      add_keep("add keep G128 CH2 MinB12", rn::launch_add_keep<T, 128, 2, 12, false>);
      add_keep("add keep G256 CH1 MinB8 wfirst", rn::launch_add_keep<T, 256, 1, 8>);
      add_keep("add keep G128 CH2 MinB16", rn::launch_add_keep<T, 128, 2, 16, false>);
      add_keep("add keep G128 CH2 MinB12 wfirst, 2", rn::launch_add_keep<T, 128, 2, 12>);
      if (rows < 2048) {
        // torch.compile read 0.35 us ahead cold at [2,128,2048] in baselines.py: without
        // programmatic dependent launch, and with plain stores.
        add("add keep G128 CH2 MinB12 wfirst no PDL",
            no_pdl([=](int i, int o) { CHECK((rn::launch_add_keep<T, 128, 2, 12>(args(i, o), g_stream))); }));
        add_keep("add keep G128 CH2 MinB12 wfirst plain", rn::launch_add_keep<T, 128, 2, 12, true, false>);
        add_keep("add keep G256 CH1 MinB8 wfirst plain", rn::launch_add_keep<T, 256, 1, 8, true, false>);
        add_keep("add keep G128 CH2 MinB12 wfirst, 3", rn::launch_add_keep<T, 128, 2, 12>);
      }
    } else {
      add_keep("add keep G256 CH2 MinB6 wfirst", rn::launch_add_keep<T, 256, 2, 6>);
      add_keep("add keep G256 CH2 MinB4 wfirst", rn::launch_add_keep<T, 256, 2, 4>);
      add_keep("add keep G256 CH2 MinB6", rn::launch_add_keep<T, 256, 2, 6, false>);
      add_keep("add keep G256 CH2 MinB8", rn::launch_add_keep<T, 256, 2, 8, false>);
      add_keep("add keep G512 CH1 MinB4 wfirst", rn::launch_add_keep<T, 512, 1, 4>);
      add_keep("add keep G128 CH4 MinB4 wfirst", rn::launch_add_keep<T, 128, 4, 4>);
      add_keep("add keep G256 CH2 MinB6 wfirst, 2", rn::launch_add_keep<T, 256, 2, 6>);
    }
  }
  return w;
}

}  // namespace probe
