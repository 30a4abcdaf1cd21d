// The probe's harness: buffers, the Workload (inputs, outputs, candidates), timing (cold, graph,
// host loop, SM clock) and the checks against the shipped launcher. Included by probe.cu only.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "../event_timing.h"
#include "adaln.cuh"
#include "adaln_launch.h"
#include "adaln_rows.cuh"
#include "geglu.cuh"
#include "geglu_launch.h"
#include "rmsnorm.cuh"
#include "rmsnorm_launch.h"
#include "rope3d.cuh"
#include "rope3d_launch.h"

namespace kc = khub_kernels::cuda;
using bf16 = __nv_bfloat16;
using khub_kernels::RowLayout;

#define CHECK(...)                                                                            \
  do {                                                                                        \
    cudaError_t e_ = (__VA_ARGS__);                                                                   \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #__VA_ARGS__, cudaGetErrorString(e_)); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)


namespace probe {

template <typename T>
static __global__ void fill_kernel(T* p, int64_t n, uint32_t seed, float scale, float offset) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed * 40503u ^ uint32_t(i >> 32) * 97u;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
    // Sum of four 8-bit uniforms: roughly normal, mean 0, sd 1.
    const float u = float((h & 255) + ((h >> 8) & 255) + ((h >> 16) & 255) + (h >> 24)) / 255.f - 2.f;
    p[i] = kc::from_float<T>(offset + scale * u * 1.7320508f);
  }
}

static __global__ void spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}

// The SM clock now, in MHz: cycles counted against the global nanosecond timer over ~20 us.
static __global__ void clock_mhz_kernel(double* mhz) {
  uint64_t t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  while (t1 - t0 < 20000);
  *mhz = double(clock64() - c0) * 1e3 / double(t1 - t0);
}

// Every SM busy for about ms milliseconds (--settle: brings the clocks up before a timing).
static __global__ void busy_kernel(uint64_t ns) {
  uint64_t t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  while (t1 - t0 < ns);
}

// Every device buffer of the current workload, freed once it has run: workloads that the filter
// skips are still built, and all of them together do not fit in 141 GB.
inline std::vector<void*> g_allocs;
template <typename P>
inline cudaError_t dev_alloc(P** p, size_t bytes) {
  const cudaError_t e = cudaMalloc(reinterpret_cast<void**>(p), bytes);
  if (e == cudaSuccess) g_allocs.push_back(*p);
  return e;
}

template <typename T = bf16>
inline T* alloc_fill(int64_t n, uint32_t seed, float scale = 1.f, float offset = 0.f) {
  T* p = nullptr;
  CHECK(dev_alloc(&p, std::max<int64_t>(n, 8) * sizeof(T)));
  fill_kernel<<<1024, 256>>>(p, n, seed, scale, offset);
  CHECK(cudaGetLastError());
  return p;
}

using khub_bench::stats;

inline cudaStream_t g_stream;
inline double g_l2 = 0;

// An output a candidate writes: its elements are compared with the shipped kernel's in their own
// type, so "diff" counts differing elements and "max" is |a - b| in value for every dtype.
enum class Elem { Bf16, F16, F32 };
struct Output {
  void* p;
  int64_t elements;
  Elem elem;
  int64_t bytes() const { return elements * (elem == Elem::F32 ? 4 : 2); }
};

template <typename T>
inline Output output_of(void* p, int64_t elements) {
  return {p, elements, std::is_same_v<T, float> ? Elem::F32 : std::is_same_v<T, __half> ? Elem::F16 : Elem::Bf16};
}

// One workload: input sets, output sets, outputs to compare, and candidates call(in, out).
// Like kernels_bench (torch's caching allocator hands every cold call the same output block, and
// every call in a captured graph its own): cold rotates the inputs into output set 0; the graph
// runs 20 calls on input set 0 into output sets 0..19.
constexpr int kGraphCalls = 20;
using Call = std::function<void(int, int)>;
struct Workload {
  std::string op, shape;
  double bytes = 0;
  int sets = 0;
  std::vector<Output> outputs;  // of output set 0, compared element by element in their type
  std::vector<std::pair<std::string, Call>> candidates;  // first = shipped
  std::vector<std::pair<std::string, Call>> tail;        // run last, before "shipped, again"
};

inline double sm_mhz() {
  static double* d = nullptr;
  if (!d) CHECK(cudaMalloc(&d, sizeof(double)));
  clock_mhz_kernel<<<1, 1, 0, g_stream>>>(d);
  double h = 0;
  CHECK(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, g_stream));
  CHECK(cudaStreamSynchronize(g_stream));
  return h;
}

inline double g_settle_ms = 0;
inline int g_repeat_first = 0;  // --repeat-first K: the shipped kernel K more times right after itself

inline std::vector<double> time_events(int reps, bool gap, const std::function<void(int)>& body) {
  return khub_bench::time_events(
      g_stream, reps, gap ? std::function<void()>([] { spin_kernel<<<1, 1, 0, g_stream>>>(120000); }) : nullptr,
      body);
}

inline std::vector<std::vector<uint8_t>> snapshot(const Workload& w) {
  std::vector<std::vector<uint8_t>> out;
  for (const Output& o : w.outputs) {
    out.emplace_back(o.bytes());
    CHECK(cudaMemcpy(out.back().data(), o.p, o.bytes(), cudaMemcpyDeviceToHost));
  }
  return out;
}

inline void poison(const Workload& w) {
  for (const Output& o : w.outputs) CHECK(cudaMemsetAsync(o.p, 0xff, o.bytes(), g_stream));  // NaN in every type
}

// Element i of a snapshot, and whether it has the same bits in both (NaN == NaN included).
inline bool same_bits(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, Elem e, int64_t i) {
  const int64_t size = e == Elem::F32 ? 4 : 2;
  return std::memcmp(a.data() + i * size, b.data() + i * size, size_t(size)) == 0;
}

inline float element(const std::vector<uint8_t>& raw, Elem e, int64_t i) {
  if (e == Elem::F32) {
    float f;
    std::memcpy(&f, raw.data() + i * 4, 4);
    return f;
  }
  uint16_t u;
  std::memcpy(&u, raw.data() + i * 2, 2);
  if (e == Elem::F16) {
    __half_raw h;
    h.x = u;
    return __half2float(__half(h));
  }
  const uint32_t v = uint32_t(u) << 16;
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}

inline std::string g_json;
inline const char* g_once = nullptr;  // --once SUBSTR: run matching candidates once each (for ncu), no timing

// filter: '|'-separated substrings of op + shape; empty runs everything.
inline bool selected(const Workload& w, const std::string& filter) {
  if (filter.empty()) return true;
  size_t start = 0;
  while (true) {
    const size_t bar = filter.find('|', start);
    const std::string part = filter.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    if (!part.empty() && (w.op + w.shape).find(part) != std::string::npos) return true;
    if (bar == std::string::npos) return false;
    start = bar + 1;
  }
}

inline void run(Workload& w, const std::string& filter) {
  if (!selected(w, filter)) return;
  if (g_once) {
    for (auto& [name, call] : w.candidates)
      if (name.find(g_once) != std::string::npos || !std::strcmp(g_once, "all")) call(0, 0);
    CHECK(cudaStreamSynchronize(g_stream));
    return;
  }
  poison(w);
  w.candidates[0].second(0, 0);
  CHECK(cudaStreamSynchronize(g_stream));
  CHECK(cudaGetLastError());
  const auto ref = snapshot(w);
  for (auto& [name, call] : w.candidates) {
    poison(w);
    call(0, 0);
    CHECK(cudaStreamSynchronize(g_stream));
    CHECK(cudaGetLastError());
    const auto got = snapshot(w);
    double maxd = 0;
    int64_t nan = 0, diff = 0;
    for (size_t o = 0; o < got.size(); ++o)
      for (int64_t i = 0; i < w.outputs[o].elements; ++i) {
        const Elem e = w.outputs[o].elem;
        if (same_bits(got[o], ref[o], e, i)) continue;
        const float a = element(got[o], e, i), b = element(ref[o], e, i);
        if (std::isnan(a) != std::isnan(b)) ++nan;
        else { ++diff; if (!std::isnan(a)) maxd = std::max(maxd, double(std::fabs(a - b))); }
      }
    if (g_settle_ms > 0) busy_kernel<<<1024, 128, 0, g_stream>>>(uint64_t(g_settle_ms * 1e6));
    const double mhz_start = sm_mhz();
    for (int i = 0; i < 3; ++i) call(i % w.sets, 0);
    const auto cold = stats(time_events(100, true, [&](int i) { call(i % w.sets, 0); }));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    const double mhz_graph = sm_mhz();
    CHECK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kGraphCalls; ++i) call(0, i);
    CHECK(cudaStreamEndCapture(g_stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(exec, g_stream));
    auto per = time_events(20, false, [&](int) { CHECK(cudaGraphLaunch(exec, g_stream)); });
    const double mhz_end = sm_mhz();
    for (auto& v : per) v /= kGraphCalls;
    const auto warm = stats(per);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    // Host path: wall time per call of 200 back-to-back launches (host-bound for small shapes).
    CHECK(cudaStreamSynchronize(g_stream));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i) call(0, 0);
    CHECK(cudaStreamSynchronize(g_stream));
    const double host = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 200;
    std::printf("%-16s %-18s %-34s %8.2f %8.2f %6.2f %6.2f %6.2f  diff %lld (max %.3g) nan %lld  MHz %.0f/%.0f/%.0f\n",
                w.op.c_str(), w.shape.c_str(), name.c_str(), cold.median, warm.median, host, w.bytes / cold.median / 1e6,
                w.bytes / warm.median / 1e6, (long long)diff, maxd, (long long)nan, mhz_start, mhz_graph, mhz_end);
    std::fflush(stdout);
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s{\"op\":\"%s\",\"shape\":\"%s\",\"candidate\":\"%s\",\"bytes\":%.0f,\"cold_us\":%.3f,"
                  "\"cold_p10_us\":%.3f,\"cold_p90_us\":%.3f,\"graph_us\":%.3f,\"host_us\":%.3f,\"diff\":%lld,"
                  "\"nan\":%lld,\"sm_mhz\":[%.0f,%.0f,%.0f]}",
                  g_json.empty() ? "" : ",\n", w.op.c_str(), w.shape.c_str(), name.c_str(), w.bytes, cold.median,
                  cold.p10, cold.p90, warm.median, host, (long long)diff, (long long)nan, mhz_start, mhz_graph,
                  mhz_end);
    g_json += buf;
  }
}

// The shipped row kernel at another group size, chunk count or register budget (min blocks/SM),
// or another fetch order.
template <typename Op, int G, int CH, int MinB, kc::Fetch F = kc::default_fetch<Op, CH>(), typename MakeOp>
inline Call fast(MakeOp make, int64_t rows, int n, float eps) {
  return [=](int i, int o) { CHECK(kc::launch_fast<Op, G, CH, MinB, F>(make(i, o), rows, n, eps, g_stream)); };
}

// The small operands (weights, modulation, tables, index) of input set i: one copy for all sets
// (hot in L2 after the first call, as in the earlier probe runs), or, with Cold, one per set like
// kernels_bench, whose every set is a fresh copy of all of a case's tensors.
template <typename T>
inline std::vector<T*> small_operand(bool cold, int sets, int64_t n, uint32_t seed, float scale = 1.f, float offset = 0.f) {
  std::vector<T*> v(sets, nullptr);
  for (int i = 0; i < sets; ++i) v[i] = (cold || i == 0) ? alloc_fill<T>(n, seed, scale, offset) : v[0];
  return v;
}
inline std::string cold_suffix(bool cold) { return cold ? " cold operands" : ""; }

// A candidate launched without programmatic dependent launch.
inline Call no_pdl(Call c) {
  return [=](int i, int o) {
    kc::pdl_enabled() = false;
    c(i, o);
    kc::pdl_enabled() = true;
  };
}

inline int sets_for(double bytes) { return int(std::clamp(std::ceil(4 * g_l2 / bytes), 2.0, 256.0)); }

inline std::string dims(std::initializer_list<int64_t> d) {
  std::string s = "[";
  for (auto v : d) s += (s.size() > 1 ? "," : "") + std::to_string(v);
  return s + "]";
}

template <typename T = bf16>
inline std::vector<T*> fills(int count, int64_t n, uint32_t seed) {
  std::vector<T*> v;
  for (int i = 0; i < count; ++i) v.push_back(alloc_fill<T>(n, seed + i));
  return v;
}

template <typename T>
constexpr khub_kernels::DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return khub_kernels::DType::F32;
  else if constexpr (std::is_same_v<T, __half>) return khub_kernels::DType::F16;
  else return khub_kernels::DType::BF16;
}

template <typename T>
inline std::string dtype_suffix() {
  return std::is_same_v<T, float> ? " f32" : std::is_same_v<T, __half> ? " f16" : "";
}

}  // namespace probe
