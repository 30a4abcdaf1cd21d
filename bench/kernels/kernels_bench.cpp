// kernels_bench: times khub's cuda variants (loaded from their variant dirs, called through the
// dispatcher) with CUDA events; writes JSON. Method:
//  * cold: median (p10, p90) of >= 100 calls, each on the next of k buffer sets whose footprint is
//    >= 4x L2; a sleep kernel ahead of each call keeps host launch time out of the event window;
//  * warm: CUDA graph of 20 calls on one set, per-call time, median of 30 replays;
//  * host: wall time per call of 200 back-to-back calls (host-bound for small shapes), median of 9 loops;
//  * copy: 1 GiB device-to-device cudaMemcpyAsync, read + write bytes;
//  * sm_mhz: the SM clock right after each case (a spin of known cycles, event-timed).
//  * --host-breakdown: the host time of a few-row RMSNorm call taken apart (bench_cases.cpp's
//    host_pieces: the op, the op on zero rows, the output's allocation, a plain kernel launch, an
//    empty kernel launched plainly and the way khub's kernels are, with the PDL attribute);
//    with a filter that matches no case (--filter none) only the breakdown runs.
// Usage: kernels_bench [--out FILE (h200_kernels.json, as run_h200.sh and bench/results/ name it)]
//        [--commit SHA] [--filter substring of op + shape + dtype]
//        [--graph-warmup N (replays before the timed ones; 3)] [--host-breakdown]
#include <ATen/cuda/CUDAGraph.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "event_timing.h"

// The kernel modules' PyInit_<id> references this; never called (see khub/loader/loader.h).
extern "C" __attribute__((visibility("default"))) void* PyModule_Create2(void*, int) { return nullptr; }

namespace {

using khub_bench::Case;

using khub_bench::check;
using khub_bench::stats;
using khub_bench::Stats;

std::vector<double> time_events(int reps, bool gap, const std::function<void(int)>& body) {
  return khub_bench::time_events(c10::cuda::getCurrentCUDAStream().stream(), reps,
                                 gap ? std::function<void()>([] { at::cuda::sleep(60000); }) : nullptr, body);
}

int g_graph_warmup = 3;  // replays before the timed ones (--graph-warmup)
constexpr int kHostLoops = 9, kHostCalls = 200;  // host time: median of 9 loops of 200 calls

// The SM clock in MHz, taken right after a case's timings while the GPU is still busy:
// `at::cuda::sleep` spins one thread on clock64 for a known number of cycles, so cycles over its
// event-timed length is the clock (the launch's ~µs is 0.1 % of a 2M-cycle spin). Separate H200
// machines have read the same kernels 1-2 % apart; this tells a slower clock from other causes
// (nvidia-smi before the run reads the idle clock).
double sm_mhz() {
  constexpr int64_t kCycles = 2'000'000;
  const auto us = time_events(3, false, [](int) { at::cuda::sleep(kCycles); });
  return static_cast<double>(kCycles) / *std::min_element(us.begin(), us.end());
}

// Wall time a call of kHostCalls back-to-back calls, synchronised before and after; the median over
// kHostLoops loops, as one loop's time moves with the host's other work (one loop of a few-row case
// read 5.6-8.1 us within a minute on one H200 machine).
double host_us(const std::function<void(int)>& call) {
  std::vector<double> loops;
  for (int k = 0; k < kHostLoops; ++k) {
    check(cudaDeviceSynchronize(), "sync");
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kHostCalls; ++i) call(i);
    check(cudaDeviceSynchronize(), "sync");
    loops.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
                    kHostCalls);
  }
  return stats(loops).median;
}

nlohmann::json run_case(const Case& c, double l2_bytes) {
  const int sets = static_cast<int>(std::clamp(std::ceil(4 * l2_bytes / c.bytes), 2.0, 512.0));
  std::vector<std::function<at::Tensor()>> calls;
  for (int i = 0; i < sets; ++i) calls.push_back(c.make());
  for (auto& f : calls) f();
  for (int i = 0; i < 5; ++i) calls[0]();
  const auto cold = stats(time_events(200, true, [&](int i) { calls[i % sets](); }));

  // Warm: CUDA graph of 20 calls on set 0.
  std::vector<at::Tensor> keep;
  const auto side = c10::cuda::getStreamFromPool();
  Stats warm{};
  {
    const c10::cuda::CUDAStreamGuard guard(side);
    for (int i = 0; i < 3; ++i) calls[0]();
    check(cudaStreamSynchronize(side.stream()), "sync");
    at::cuda::CUDAGraph g;
    g.capture_begin();
    for (int i = 0; i < 20; ++i) keep.push_back(calls[0]());
    g.capture_end();
    for (int i = 0; i < g_graph_warmup; ++i) g.replay();
    auto per = time_events(30, false, [&](int) { g.replay(); });
    for (auto& v : per) v /= 20;
    warm = stats(per);
  }
  const double mhz = sm_mhz();
  const double host = host_us([&](int i) { calls[i % sets](); });

  return {{"op", c.op},          {"shape", c.shape},     {"dtype", c.dtype},        {"bytes", c.bytes},
          {"buffer_sets", sets}, {"cold_us", cold.median}, {"cold_p10_us", cold.p10}, {"cold_p90_us", cold.p90},
          {"graph_us", warm.median}, {"graph_p10_us", warm.p10}, {"graph_p90_us", warm.p90},
          {"host_loop_us", host},    {"cold_tbps", c.bytes / cold.median / 1e6},
          {"graph_tbps", c.bytes / warm.median / 1e6}, {"sm_mhz", mhz}};
}

double copy_tbps(double* cold_us) {
  const size_t n = size_t{1} << 30;
  void *a = nullptr, *b = nullptr;
  check(cudaMalloc(&a, n), "cudaMalloc");
  check(cudaMalloc(&b, n), "cudaMalloc");
  check(cudaMemset(a, 1, n), "memset");
  const cudaStream_t s = c10::cuda::getCurrentCUDAStream().stream();
  for (int i = 0; i < 3; ++i) check(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s), "copy");
  const auto st = stats(time_events(20, false, [&](int) { check(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s), "copy"); }));
  cudaFree(a);
  cudaFree(b);
  *cold_us = st.median;
  return 2.0 * n / st.median / 1e6;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string out = "h200_kernels.json", commit = "unknown", filter;
  bool breakdown = false;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--host-breakdown") {
      breakdown = true;
      continue;
    }
    std::string* dest = k == "--out" ? &out : k == "--commit" ? &commit : k == "--filter" ? &filter : nullptr;
    if (!dest && k != "--graph-warmup")
      throw std::runtime_error("unknown option " + k + " (--out, --commit, --filter, --graph-warmup, --host-breakdown)");
    if (i + 1 >= argc) throw std::runtime_error("option " + k + " needs a value");
    const std::string v = argv[++i];
    if (dest) *dest = v;
    else g_graph_warmup = std::stoi(v);
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  double copy_us = 0;
  const double copy = copy_tbps(&copy_us);
  std::printf("%s: %d SMs, L2 %.0f MB; copy 1 GiB d2d %.1f us = %.2f TB/s\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize / 1e6, copy_us, copy);
  nlohmann::json results = nlohmann::json::array();
  std::printf("%-28s %-22s %-9s %9s %9s %9s %7s %6s %6s\n", "op", "shape", "dtype", "cold_us", "graph_us", "host_us",
              "TB/s", "%copy", "MHz");
  for (const Case& c : khub_bench::all_cases()) {
    if (!filter.empty() && (c.op + c.shape + c.dtype).find(filter) == std::string::npos) continue;
    auto r = run_case(c, prop.l2CacheSize);
    r["pct_copy"] = 100.0 * r["cold_tbps"].get<double>() / copy;
    std::printf("%-28s %-22s %-9s %9.2f %9.2f %9.2f %7.2f %6.1f %6.0f\n", c.op.c_str(), c.shape.c_str(),
                c.dtype.c_str(), r["cold_us"].get<double>(), r["graph_us"].get<double>(), r["host_loop_us"].get<double>(),
                r["cold_tbps"].get<double>(), r["pct_copy"].get<double>(), r["sm_mhz"].get<double>());
    std::fflush(stdout);
    results.push_back(r);
  }
  nlohmann::json pieces = nlohmann::json::object();
  if (breakdown) {
    std::printf("host time a call, median of %d loops of %d calls:\n", kHostLoops, kHostCalls);
    for (const auto& [name, fn] : khub_bench::host_pieces()) {
      const double us = host_us([&](int) { fn(); });
      std::printf("  %-58s %7.2f us\n", name.c_str(), us);
      pieces[name] = us;
    }
  }
  const nlohmann::json doc = {{"harness", "kernels_bench (C++, CUDA events)"},
                              {"gpu", prop.name},
                              {"sm_count", prop.multiProcessorCount},
                              {"l2_bytes", prop.l2CacheSize},
                              {"cuda_runtime", rt},
                              {"cuda_driver", drv},
                              {"torch", TORCH_VERSION},
                              {"commit", commit},
                              {"copy_1gib_us", copy_us},
                              {"copy_tbps", copy},
                              {"results", results},
                              {"host_breakdown_us", pieces}};
  std::ofstream(out) << doc.dump(2) << "\n";
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "kernels_bench: %s\n", e.what());
  return 1;
}
