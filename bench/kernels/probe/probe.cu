// probe: times candidate launch configurations of the bundled kernels' device code on one GPU,
// without torch, so one device call can compare many designs. Every candidate is first checked
// against the shipped launcher on the same inputs (outputs poisoned with NaN first; max |diff| and
// unwritten elements reported), then timed like kernels_bench: cold = median of 100 calls rotating
// through buffer sets >= 4x L2 with a spin kernel ahead of each call; graph = per-call time of 20
// calls in a CUDA graph on one set, median of 20 replays. "copy" rows are a 16-byte copy kernel
// moving the same bytes: the floor each shape can reach.
// Build (here or on the GPU machine): bench/kernels/probe/build.sh; run: probe [--json F] [filter].
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

namespace {

template <typename T>
__global__ void fill_kernel(T* p, int64_t n, uint32_t seed, float scale, float offset) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed * 40503u ^ uint32_t(i >> 32) * 97u;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
    // Sum of four 8-bit uniforms: roughly normal, mean 0, sd 1.
    const float u = float((h & 255) + ((h >> 8) & 255) + ((h >> 16) & 255) + (h >> 24)) / 255.f - 2.f;
    p[i] = kc::from_float<T>(offset + scale * u * 1.7320508f);
  }
}

__global__ void spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}

// The SM clock now, in MHz: cycles counted against the global nanosecond timer over ~20 us.
__global__ void clock_mhz_kernel(double* mhz) {
  uint64_t t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  while (t1 - t0 < 20000);
  *mhz = double(clock64() - c0) * 1e3 / double(t1 - t0);
}

// Every SM busy for about ms milliseconds (--settle: brings the clocks up before a timing).
__global__ void busy_kernel(uint64_t ns) {
  uint64_t t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  while (t1 - t0 < ns);
}

// 16-byte copy with the kernels' own load and store hints (ldg_stream, st.global.cs); with a plain
// store it ran 2-3 % slower than cudaMemcpyAsync (docs/gpu-measurements.md, version 15).
__global__ void copy_kernel(const uint4* __restrict__ a, uint4* __restrict__ b, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) __stcs(b + i, kc::ldg_stream(a + i));
}

// The copy engine's floor: each block moves one Chunk-byte piece with cp.async.bulk, global ->
// shared (completion on an mbarrier) -> global, from one thread. A block keeps Chunk bytes in
// flight (7 x 32 KB an SM against copy16's 2048 x 16 B), so this asks whether the ops' cold times,
// which sit near copy16's, are bound by how many bytes per-thread loads keep in flight. Version 20
// (calls 89-93): cold level with copy16 for the bytes of the 24-44 MB ops and 3-8 % slower from
// 88 MB; in graph replay (inputs in L2) 3-14 % faster for those small ops, 6 % slower at 88 MB.
template <int Chunk>
__global__ void __launch_bounds__(32) bulk_copy_kernel(const char* __restrict__ a, char* __restrict__ b, int64_t bytes) {
  extern __shared__ __align__(128) char buf[];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x != 0) return;
  const int64_t at = blockIdx.x * int64_t(Chunk);
  const unsigned size = unsigned(std::min<int64_t>(Chunk, bytes - at));
  const unsigned sb = unsigned(__cvta_generic_to_shared(buf)), mb = unsigned(__cvta_generic_to_shared(&bar));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(mb));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(mb), "r"(size) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(sb), "l"(a + at), "r"(size), "r"(mb) : "memory");
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(mb) : "memory");
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(b + at), "r"(sb), "r"(size) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

template <int Chunk>
void bulk_copy(const void* a, void* b, int64_t bytes, cudaStream_t stream) {
  static const bool sized = [] {
    CHECK(cudaFuncSetAttribute(bulk_copy_kernel<Chunk>, cudaFuncAttributeMaxDynamicSharedMemorySize, Chunk));
    return true;
  }();
  (void)sized;
  bulk_copy_kernel<Chunk><<<unsigned((bytes + Chunk - 1) / Chunk), 32, Chunk, stream>>>(
      static_cast<const char*>(a), static_cast<char*>(b), bytes);
  static bool checked = false;  // the first call runs outside graph capture (run's correctness pass)
  if (checked) return;
  checked = true;
  std::vector<char> ha(bytes), hb(bytes);
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaMemcpy(ha.data(), a, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hb.data(), b, bytes, cudaMemcpyDeviceToHost));
  if (ha != hb) {
    std::fprintf(stderr, "bulk copy %d: output differs from input\n", Chunk);
    std::exit(3);
  }
}

// GEGLU's traffic without its math: each output vector from two input vectors cols apart in a row
// of 2 x cols (x and gate), so the reads are two thirds of the bytes (copy16 reads half).
__global__ void pair_kernel(const uint4* __restrict__ a, uint4* __restrict__ b, int64_t rows, int64_t cols) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= rows * cols) return;
  const int64_t r = i / cols, c = i - r * cols;
  const uint4 x = kc::ldg_stream(a + 2 * r * cols + c), g = kc::ldg_stream(a + 2 * r * cols + cols + c);
  __stcs(b + i, make_uint4(x.x ^ g.x, x.y ^ g.y, x.z ^ g.z, x.w ^ g.w));
}

// copy16 plus a bf16 -> fp32 -> bf16 round trip with one multiply per element.
__global__ void convert_kernel(const uint4* __restrict__ a, uint4* __restrict__ b, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  kc::Pack16<bf16> p;
  p.u = kc::ldg_stream(a + i);
#pragma unroll
  for (int k = 0; k < 8; ++k) p.t[k] = __float2bfloat16_rn(__bfloat162float(p.t[k]) * 1.0001f);
  __stcs(b + i, p.u);
}

// Every device buffer of the current workload, freed once it has run: workloads that the filter
// skips are still built, and all of them together do not fit in 141 GB.
std::vector<void*> g_allocs;
template <typename P>
cudaError_t dev_alloc(P** p, size_t bytes) {
  const cudaError_t e = cudaMalloc(reinterpret_cast<void**>(p), bytes);
  if (e == cudaSuccess) g_allocs.push_back(*p);
  return e;
}

template <typename T = bf16>
T* alloc_fill(int64_t n, uint32_t seed, float scale = 1.f, float offset = 0.f) {
  T* p = nullptr;
  CHECK(dev_alloc(&p, std::max<int64_t>(n, 8) * sizeof(T)));
  fill_kernel<<<1024, 256>>>(p, n, seed, scale, offset);
  CHECK(cudaGetLastError());
  return p;
}

using khub_bench::stats;

cudaStream_t g_stream;
double g_l2 = 0;

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
  // Of output set 0: pointer, 16-bit words (2 per fp32 element: candidates are compared word by
  // word, so "diff" counts differing words and "max" is meaningful for 16-bit types only).
  std::vector<std::pair<void*, int64_t>> outputs;
  std::vector<std::pair<std::string, Call>> candidates;  // first = shipped
};

double sm_mhz() {
  static double* d = nullptr;
  if (!d) CHECK(cudaMalloc(&d, sizeof(double)));
  clock_mhz_kernel<<<1, 1, 0, g_stream>>>(d);
  double h = 0;
  CHECK(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, g_stream));
  CHECK(cudaStreamSynchronize(g_stream));
  return h;
}

double g_settle_ms = 0;
int g_repeat_first = 0;  // --repeat-first K: the shipped kernel K more times right after itself

std::vector<double> time_events(int reps, bool gap, const std::function<void(int)>& body) {
  return khub_bench::time_events(
      g_stream, reps, gap ? std::function<void()>([] { spin_kernel<<<1, 1, 0, g_stream>>>(120000); }) : nullptr,
      body);
}

std::vector<std::vector<uint16_t>> snapshot(const Workload& w) {
  std::vector<std::vector<uint16_t>> out;
  for (auto [p, n] : w.outputs) {
    out.emplace_back(n);
    CHECK(cudaMemcpy(out.back().data(), p, n * 2, cudaMemcpyDeviceToHost));
  }
  return out;
}

void poison(const Workload& w) {
  for (auto [p, n] : w.outputs) CHECK(cudaMemsetAsync(p, 0xff, n * 2, g_stream));  // bf16 NaN
}

float bf(uint16_t u) {
  uint32_t v = uint32_t(u) << 16;
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}

std::string g_json;
const char* g_once = nullptr;  // --once SUBSTR: run matching candidates once each (for ncu), no timing

// filter: '|'-separated substrings of op + shape; empty runs everything.
bool selected(const Workload& w, const std::string& filter) {
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

void run(Workload& w, const std::string& filter) {
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
      for (size_t i = 0; i < got[o].size(); ++i) {
        if (got[o][i] == ref[o][i]) continue;  // same bits (also NaN == NaN, and fp32 halves)
        const float a = bf(got[o][i]), b = bf(ref[o][i]);
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
Call fast(MakeOp make, int64_t rows, int n, float eps) {
  return [=](int i, int o) { CHECK(kc::launch_fast<Op, G, CH, MinB, F>(make(i, o), rows, n, eps, g_stream)); };
}

// The small operands (weights, modulation, tables, index) of input set i: one copy for all sets
// (hot in L2 after the first call, as in the earlier probe runs), or, with Cold, one per set like
// kernels_bench, whose every set is a fresh copy of all of a case's tensors.
template <typename T>
std::vector<T*> small_operand(bool cold, int sets, int64_t n, uint32_t seed, float scale = 1.f, float offset = 0.f) {
  std::vector<T*> v(sets, nullptr);
  for (int i = 0; i < sets; ++i) v[i] = (cold || i == 0) ? alloc_fill<T>(n, seed, scale, offset) : v[0];
  return v;
}
std::string cold_suffix(bool cold) { return cold ? " cold operands" : ""; }

// A candidate launched without programmatic dependent launch.
Call no_pdl(Call c) {
  return [=](int i, int o) {
    kc::pdl_enabled() = false;
    c(i, o);
    kc::pdl_enabled() = true;
  };
}

int sets_for(double bytes) { return int(std::clamp(std::ceil(4 * g_l2 / bytes), 2.0, 256.0)); }

std::string dims(std::initializer_list<int64_t> d) {
  std::string s = "[";
  for (auto v : d) s += (s.size() > 1 ? "," : "") + std::to_string(v);
  return s + "]";
}

template <typename T = bf16>
std::vector<T*> fills(int count, int64_t n, uint32_t seed) {
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
std::string dtype_suffix() {
  return std::is_same_v<T, float> ? " f32" : std::is_same_v<T, __half> ? " f16" : "";
}

template <typename T>
int64_t words(int64_t elements) {
  return elements * int64_t(sizeof(T)) / 2;
}

// References: cudaMemcpyAsync and a 16-byte copy kernel moving the op's bytes (half read, half written).
void add_copies(Workload& w) {
  const int64_t bytes = int64_t(w.bytes / 2) / 16 * 16;
  std::vector<void*> a(w.sets), b(kGraphCalls);
  for (auto& p : a) CHECK(dev_alloc(&p, bytes));
  for (auto& p : b) CHECK(dev_alloc(&p, bytes));
  w.candidates.push_back({"memcpy (same bytes)", [=](int i, int o) {
                            CHECK(cudaMemcpyAsync(b[o], a[i], bytes, cudaMemcpyDeviceToDevice, g_stream));
                          }});
  w.candidates.push_back({"copy16 (same bytes)", [=](int i, int o) {
                            const int64_t vecs = bytes / 16;
                            copy_kernel<<<unsigned((vecs + 255) / 256), 256, 0, g_stream>>>(
                                static_cast<const uint4*>(a[i]), static_cast<uint4*>(b[o]), vecs);
                          }});
  w.candidates.push_back({"bulk 16K (same bytes)", [=](int i, int o) { bulk_copy<16384>(a[i], b[o], bytes, g_stream); }});
  w.candidates.push_back({"bulk 32K (same bytes)", [=](int i, int o) { bulk_copy<32768>(a[i], b[o], bytes, g_stream); }});
  w.candidates.push_back({"bulk 64K (same bytes)", [=](int i, int o) { bulk_copy<65536>(a[i], b[o], bytes, g_stream); }});
  w.candidates.push_back({"convert16 (same bytes)", [=](int i, int o) {
                            const int64_t vecs = bytes / 16;
                            convert_kernel<<<unsigned((vecs + 255) / 256), 256, 0, g_stream>>>(
                                static_cast<const uint4*>(a[i]), static_cast<uint4*>(b[o]), vecs);
                          }});
}

// ---- Streaming copies with other cache hints, vectors per thread and block sizes -----------------
// Load: 0 ld.global.nc.L1::no_allocate (the kernels' ldg_stream), 1 ld.global (coherent, L1
// allocating), 2 ld.global.nc, 3 ld.global.nc.L1::no_allocate.L2::256B (DRAM prefetch hint).
// Store: 0 st.global, 1 st.global.cs (the kernels' st_out<true>).
template <int Load>
__device__ __forceinline__ uint4 load_policy(const uint4* p) {
  uint4 v;
  if constexpr (Load == 0)
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else if constexpr (Load == 1)
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else if constexpr (Load == 2)
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

template <int U, int Load, int Store>
__global__ void copy_policy_kernel(const uint4* __restrict__ a, uint4* __restrict__ b, int64_t n) {
  const int64_t base = blockIdx.x * int64_t(blockDim.x) * U + threadIdx.x;
  uint4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (base + u * blockDim.x < n) v[u] = load_policy<Load>(a + base + u * blockDim.x);
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (base + u * blockDim.x >= n) continue;
    if constexpr (Store == 1) __stcs(b + base + u * blockDim.x, v[u]);
    else b[base + u * blockDim.x] = v[u];
  }
}

Workload copy_policies(int64_t bytes_each_way) {
  Workload w;
  w.op = "copy_policy";
  w.shape = std::to_string(bytes_each_way >> 20) + "MiB";
  w.bytes = 2.0 * bytes_each_way;
  w.sets = sets_for(w.bytes);
  const int64_t vecs = bytes_each_way / 16;
  const auto a = fills<float>(w.sets, bytes_each_way / 4, 800);
  const auto b = fills<float>(kGraphCalls, bytes_each_way / 4, 1);
  w.outputs.push_back({b[0], bytes_each_way / 2});
  auto add = [&](std::string name, auto kernel, int threads, int u) {
    w.candidates.push_back({name, [=](int i, int o) {
                              kernel<<<unsigned((vecs + threads * u - 1) / (threads * u)), threads, 0, g_stream>>>(
                                  reinterpret_cast<const uint4*>(a[i]), reinterpret_cast<uint4*>(b[o]), vecs);
                            }});
  };
  add("nc.noalloc / st, U1 256", copy_policy_kernel<1, 0, 0>, 256, 1);
  w.candidates.push_back({"memcpy", [=](int i, int o) {
                            CHECK(cudaMemcpyAsync(b[o], a[i], bytes_each_way, cudaMemcpyDeviceToDevice, g_stream));
                          }});
  add("nc.noalloc / st.cs, U1 256", copy_policy_kernel<1, 0, 1>, 256, 1);
  add("ld / st, U1 256", copy_policy_kernel<1, 1, 0>, 256, 1);
  add("nc / st, U1 256", copy_policy_kernel<1, 2, 0>, 256, 1);
  add("nc.noalloc.L2::256B / st, U1 256", copy_policy_kernel<1, 3, 0>, 256, 1);
  add("nc.noalloc.L2::256B / st.cs, U1 256", copy_policy_kernel<1, 3, 1>, 256, 1);
  add("nc.noalloc / st, U1 128", copy_policy_kernel<1, 0, 0>, 128, 1);
  add("nc.noalloc / st, U2 128", copy_policy_kernel<2, 0, 0>, 128, 2);
  add("nc.noalloc / st, U2 256", copy_policy_kernel<2, 0, 0>, 256, 2);
  add("nc.noalloc / st, U4 128", copy_policy_kernel<4, 0, 0>, 128, 4);
  add("ld / st, U2 128", copy_policy_kernel<2, 1, 0>, 128, 2);
  add("nc.noalloc.L2::256B / st, U2 128", copy_policy_kernel<2, 3, 0>, 128, 2);
  add("nc.noalloc / st, U1 512", copy_policy_kernel<1, 0, 0>, 512, 1);
  add("nc.noalloc / st, U1 1024", copy_policy_kernel<1, 0, 0>, 1024, 1);
  return w;
}

// ---- RMSNorm, and the fused residual add + RMSNorm when Residual ----------------------------------
template <typename T, bool Residual, bool Cold = false>
Workload rms(int64_t rows, int n, std::string shape) {
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
  w.outputs.push_back({outs[0], words<T>(rows * n)});
  if (Residual) w.outputs.push_back({routs[0], words<T>(rows * n)});
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
  // Earlier sweeps (group sizes, fetch orders, fp32 3072 and q/k-head configurations, L2 prefetch of
  // the weight): docs/gpu-measurements.md, version 16.
  if constexpr (!Residual) {
    namespace rn = khub_kernels::rmsnorm;
    auto dedicated = [&](const char* name, auto launch) {
      add(name, [=](int i, int o) { CHECK(launch(xs[i], xl, weights[i], outs[o], n, 1e-6f, false, g_stream)); });
    };
    // Interleaved, so neither side gets the later (faster-measuring) slots only. "keep": the
    // one-pass dedicated kernel; "engine": the row engine; "reload": the two-pass kernel ("reload
    // L1": with RowRead::L1Keep). Earlier sweeps (several rows a group, plain stores, L1 / L2
    // priorities): docs/gpu-measurements.md, version 17.
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
        dedicated("reload L1 G256 CH2 MinB8", rn::launch_reload<T, 256, 2, 8, RR::L1Keep>);
        dedicated("keep L1 G256 CH2 MinB8", rn::launch_keep<T, 256, 2, 8, true>);
        dedicated("keep L1 G512 CH1 MinB4", rn::launch_keep<T, 512, 1, 4, true>);
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
        dedicated("keep G512 CH1 MinB4, 2", rn::launch_keep<T, 512, 1, 4>);
      }
      if (n == 3072) {
        add("engine G128 CH4 MinB6", fast<RmsOp, 128, 4, 6>(op, rows, n, 1e-6f));
        dedicated("keep G128 CH3 MinB8", rn::launch_keep<T, 128, 3, 8>);
      }
      if (n == 128) {
        add("engine G8 CH2 MinB6", fast<RmsOp, 8, 2, 6>(op, rows, n, 1e-6f));
        dedicated("keep G8 CH2 MinB6", rn::launch_keep<T, 8, 2, 6>);
        dedicated("keep G8 CH2 MinB8", rn::launch_keep<T, 8, 2, 8>);
        dedicated("keep G16 CH1 MinB8", rn::launch_keep<T, 16, 1, 8>);
        dedicated("keep G16 CH1 MinB12", rn::launch_keep<T, 16, 1, 12>);
        dedicated("keep L1 G16 CH1 MinB8", rn::launch_keep<T, 16, 1, 8, true>);
        dedicated("keep L1 G8 CH2 MinB8", rn::launch_keep<T, 8, 2, 8, true>);
        dedicated("keep G8 CH2 MinB6, 2", rn::launch_keep<T, 8, 2, 6>);
      }
    } else {
      if (n == 128) {
        add("engine G16 CH2 MinB6", fast<RmsOp, 16, 2, 6>(op, rows, n, 1e-6f));
        dedicated("keep G16 CH2 MinB6", rn::launch_keep<T, 16, 2, 6>);
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
        dedicated("keep G256 CH2 MinB6, 2", rn::launch_keep<T, 256, 2, 6>);
      }
      if (n == 3072) {
        dedicated("reload hint G256 CH3 MinB6 (before)", rn::launch_reload<T, 256, 3, 6, RR::L2Hint>);
        dedicated("reload L1 L2 G256 CH3 MinB6", rn::launch_reload<T, 256, 3, 6, RR::L1KeepL2Hint>);
      }
    }
  }
  return w;
}

// ---- AdaLN (table + temb, T = 1) ------------------------------------------------------------------
template <typename T = bf16, bool Cold = false>
Workload adaln(int64_t b, int64_t s, int n) {
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
  w.outputs.push_back({outs[0], words<T>(rows * n)});
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
  // engine re-swept after unpack16): docs/gpu-measurements.md, versions 16 and 17. R rows of one
  // sample a group (adaln_rows.cuh; the modulation fetched at the stores instead, and R at other
  // budgets and group sizes): version 19, calls 80-81.
  namespace ad = khub_kernels::adaln;
  auto rk = [&](const char* name, cudaError_t (*launch)(const ad::AdaLnArgs&, cudaStream_t)) {
    if (launch(args(0, 0), g_stream) == cudaErrorInvalidValue) return;  // R does not divide s
    add(name, [=](int i, int o) { CHECK(launch(args(i, o), g_stream)); });
  };
  constexpr int V = 16 / sizeof(T);
  if (n == 256 * V) {  // 16-bit rows of 2048, fp32 rows of 1024
    add("engine G128 CH2 (16-bit shipped before)", fast<Op, 128, 2, 12>(op, rows, n, 1e-6f));
    // Row and modulation loads bypassing L1 ("stream"; shipped with R4 from 8192 16-bit rows) or
    // kept there ("L1 keep"; shipped with R2 below that); the other L1 policies: version 19,
    // calls 84-85.
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

// ---- RoPE table mode q + k ------------------------------------------------------------------------
// TorchLayout: q / k rows as the torch binding describes [B, S, D] (outer blocks of S rows, so the
// rows of samples >= 1 take a division), not as one flat block of rows.
template <bool Norm, bool TorchLayout = false, bool Cold = false>
Workload rope_table(int64_t b, int64_t fr, int64_t h, int64_t wd) {
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
  const auto dct = upload(ct), dst = upload(st);
  const auto didx = upload(idx);
  const auto wq = small_operand<bf16>(Cold, w.sets, d, 11, 0.1f, 1.f);
  const auto wk = small_operand<bf16>(Cold, w.sets, d, 12, 0.1f, 1.f);
  const auto qs = fills(w.sets, tokens * d, 300), ks = fills(w.sets, tokens * d, 400);
  const auto qo = fills(kGraphCalls, tokens * d, 1), ko = fills(kGraphCalls, tokens * d, 2);
  w.outputs.push_back({qo[0], tokens * d});
  w.outputs.push_back({ko[0], tokens * d});
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
  const int64_t rows = 2 * tokens;
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
    // Earlier candidates (weights first, two samples a group, other budgets, L2 prefetch): version 16.
    // Re-sweep after unpack16 / keep_packed (version 17): the shipped G128 x 2 at 1024 threads/SM.
    token_stream("token T weight G128 CH2 MinB6", r3::launch_rope_token<128, 2, 6, true, OpS>);
    token_stream("token T weight G128 CH2 MinB10", r3::launch_rope_token<128, 2, 10, true, OpS>);
    token_stream("token T weight G256 CH1 MinB8", r3::launch_rope_token<256, 1, 8, true, OpS>);
    token_stream("token T weight G64 CH4 MinB12", r3::launch_rope_token<64, 4, 12, true, OpS>);
    token_stream("token T weight G128 CH2 MinB8, 2", r3::launch_rope_token<128, 2, 8, true, OpS>);
    // q and k loads allocating in L1 (version 19; not yet run).
    token_stream("token T weight G128 CH2 MinB8 L1 keep", r3::launch_rope_token<128, 2, 8, true, OpS, true>);
  } else {
    // The shipped kernel takes one group per token (q and k together, trig fetched once).
    auto token = [&](const char* name, auto launch) {
      add(name, [=](int i, int o) { CHECK(launch(op(i, o), tokens, d, 0.f, g_stream)); });
    };
    // The row engine's configuration before version 16, and the other token configurations measured.
    token("token G128 CH2 MinB10", r3::launch_rope_token<128, 2, 10, false, Op>);
    token("token G128 CH2 MinB16", r3::launch_rope_token<128, 2, 16, false, Op>);
    token("token G256 CH1 MinB6", r3::launch_rope_token<256, 1, 6, false, Op>);
    token("token G256 CH1 MinB8 L1 keep", r3::launch_rope_token<256, 1, 8, false, Op, true>);
    token("token G256 CH1 MinB6 L1 keep", r3::launch_rope_token<256, 1, 6, false, Op, true>);
  }
  return w;
}

// ---- GEGLU / GELU-tanh ----------------------------------------------------------------------------
// The shipped GEGLU kernel at another unroll (vectors per thread) and block size.
template <typename T, int U, khub_kernels::geglu::Act A, bool Gated, bool TileX, bool L1Keep = false>
cudaError_t geglu_direct(const khub_kernels::geglu::GegluArgs& a, int threads, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  const unsigned rows = unsigned(a.x_layout.rows), tiles = unsigned(((a.n + V - 1) / V + threads * U - 1) / (threads * U));
  return kc::launch(khub_kernels::geglu::geglu_kernel<T, V, U, A, Gated, TileX, L1Keep>,
                    TileX ? dim3(tiles, rows) : dim3(rows, tiles), dim3(threads), stream, static_cast<const T*>(a.x),
                    a.x_layout, static_cast<T*>(a.out), a.n);
}

template <typename T, khub_kernels::geglu::Act A, bool Gated>
Workload geglu(int64_t b, int64_t s, int64_t n) {
  namespace gg = khub_kernels::geglu;
  Workload w;
  const int64_t rows = b * s, in = Gated ? 2 * n : n;
  w.op = Gated ? "geglu" : "gelu_tanh";
  w.shape = dims({b, s, in}) + dtype_suffix<T>();
  w.bytes = double(sizeof(T)) * rows * (in + n);
  w.sets = sets_for(w.bytes);
  const auto xs = fills<T>(w.sets, rows * in, 500);
  const auto outs = fills<T>(kGraphCalls, rows * n, 1);
  w.outputs.push_back({outs[0], words<T>(rows * n)});
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
  w.candidates.push_back({"shipped, no PDL", no_pdl(w.candidates[0].second)});
  auto direct = [&](const char* name, auto launch, int threads) {
    w.candidates.push_back({name, [=](int i, int o) { CHECK(launch(args(i, o), threads, g_stream)); }});
  };
  direct("U1 tiles in x", geglu_direct<T, 1, A, Gated, true>, 128);
  direct("U1 rows in x", geglu_direct<T, 1, A, Gated, false>, 128);
  direct("U2 tiles in x", geglu_direct<T, 2, A, Gated, true>, 128);
  direct("U2 rows in x", geglu_direct<T, 2, A, Gated, false>, 128);
  // Loads allocating in L1 (version 19's graph-replay gain for inputs that come from L2; not yet run).
  direct("U1 tiles in x, L1 keep", geglu_direct<T, 1, A, Gated, true, true>, 128);
  direct("U2 tiles in x, L1 keep", geglu_direct<T, 2, A, Gated, true, true>, 128);
  // A copy-engine GEGLU (cp.async.bulk tiles of K rows into shared memory, 128 threads computing
  // from there) lost at every shape and dtype: [2,1024,4096] 11.5-13.6 / 6.9-10.1 us against
  // 10.7 / 6.2, [2,2688,16384] 67.4-74.7 against 66.7 (version 20, call 90; branch exp/geglu-bulk).
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

}  // namespace

int main(int argc, char** argv) {
  std::string filter, json = "probe.json";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    else if (!std::strcmp(argv[i], "--once") && i + 1 < argc) g_once = argv[++i];
    else if (!std::strcmp(argv[i], "--settle") && i + 1 < argc) g_settle_ms = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--repeat-first") && i + 1 < argc) g_repeat_first = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--prefer") && i + 1 < argc) {  // the device-wide L1 / shared split
      const char* v = argv[++i];
      CHECK(cudaDeviceSetCacheConfig(!std::strcmp(v, "shared") ? cudaFuncCachePreferShared
                                     : !std::strcmp(v, "l1")   ? cudaFuncCachePreferL1
                                                               : cudaFuncCachePreferEqual));
    }
    else filter = argv[i];
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  g_l2 = prop.l2CacheSize;
  CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  std::printf("%s, %d SMs, L2 %.0f MB\n", prop.name, prop.multiProcessorCount, g_l2 / 1e6);
  std::printf("%-16s %-18s %-34s %8s %8s %6s %6s %6s\n", "op", "shape", "candidate", "cold_us", "graph_us", "host_us",
              "TB/s", "gTB/s");
  using khub_kernels::geglu::Act;
  std::vector<std::function<Workload()>> all = {
      [] { return rms<bf16, false>(5376, 2048, "[2,2688,2048]"); },
      [] { return rms<bf16, false>(16128, 2048, "[2,8064,2048]"); },
      [] { return rms<bf16, false>(8192, 4096, "[1,8192,4096]"); },
      [] { return rms<bf16, false>(2048, 4096, "[1,2048,4096]"); },
      [] { return rms<bf16, false>(16384, 3072, "[4,4096,3072]"); },
      [] { return rms<bf16, false>(262144, 128, "[1,8192,32,128]"); },
      [] { return rms<bf16, false>(64, 4096, "[64,1,4096]"); },
      [] { return rms<bf16, false>(1024, 2048, "[1,1024,2048]"); },
      [] { return rms<bf16, false>(2048, 2048, "[2,1024,2048]"); },
      [] { return rms<bf16, false>(1024, 4096, "[1,1024,4096]"); },
      [] { return rms<bf16, false>(4096, 2048, "[4,1024,2048]"); },
      [] { return rms<bf16, false>(512, 4096, "[1,512,4096]"); },
      [] { return rms<bf16, false>(14784, 2048, "[2,7392,2048]"); },
      [] { return rms<bf16, false>(8192, 2048, "[1,8192,2048]"); },
      [] { return rms<bf16, false>(4096, 4096, "[1,4096,4096]"); },
      [] { return rms<bf16, false>(128, 4096, "[1,128,4096]"); },
      [] { return rms<bf16, false>(256, 2048, "[2,128,2048]"); },
      [] { return rms<bf16, true>(5376, 2048, "[2,2688,2048]"); },
      [] { return adaln(2, 2688, 2048); },
      [] { return adaln(2, 8064, 2048); },
      [] { return adaln<bf16, true>(2, 2688, 2048); },
      [] { return adaln<bf16, true>(2, 8064, 2048); },
      [] { return adaln(1, 256, 2048); },
      [] { return adaln(1, 1024, 2048); },
      [] { return adaln(2, 1024, 2048); },
      [] { return adaln<__half>(2, 2688, 2048); },
      [] { return adaln<float>(2, 2688, 2048); },
      [] { return adaln<float>(2, 8064, 2048); },
      [] { return adaln(1, 4096, 4096); },
      [] { return adaln(1, 4096, 3072); },
      [] { return rope_table<false>(2, 7, 16, 24); },
      [] { return rope_table<true>(2, 7, 16, 24); },
      [] { return rope_table<true, true>(2, 7, 16, 24); },
      [] { return rope_table<true, true, true>(2, 7, 16, 24); },
      [] { return rope_table<false>(2, 21, 16, 24); },
      [] { return geglu<bf16, Act::GeluErf, true>(2, 2688, 8192); },
      [] { return geglu<bf16, Act::GeluErf, true>(2, 1024, 2048); },
      [] { return geglu<bf16, Act::GeluTanh, false>(2, 2688, 8192); },
      [] { return rms<float, true>(5376, 2048, "[2,2688,2048]"); },
      [] { return copy_policies(int64_t(176) << 20); },
      [] { return copy_policies(int64_t(44) << 20); },
      [] { return copy_policies(int64_t(11) << 20); },
      [] { return rms<__half, true>(5376, 2048, "[2,2688,2048]"); },
      [] { return geglu<float, Act::GeluErf, true>(2, 2688, 8192); },
      [] { return geglu<__half, Act::GeluErf, true>(2, 2688, 8192); },
      [] { return geglu<float, Act::GeluTanh, false>(2, 2688, 8192); },
      [] { return geglu<__half, Act::GeluTanh, false>(2, 2688, 8192); },
      [] { return rms<float, false>(5376, 2048, "[2,2688,2048]"); },
      [] { return rms<__half, false>(5376, 2048, "[2,2688,2048]"); },
      [] { return rms<__half, false>(16384, 3072, "[4,4096,3072]"); },
      [] { return rms<__half, false>(262144, 128, "[1,8192,32,128]"); },
      [] { return rms<float, false>(16384, 3072, "[4,4096,3072]"); },
      [] { return rms<float, false>(262144, 128, "[1,8192,32,128]"); },
      [] { return rms<float, false, true>(16384, 3072, "[4,4096,3072]"); },
      [] { return rms<float, false, true>(262144, 128, "[1,8192,32,128]"); },
      [] { return rms<bf16, false, true>(16128, 2048, "[2,8064,2048]"); },
      [] { return rms<bf16, false, true>(5376, 2048, "[2,2688,2048]"); },
      [] { return rms<bf16, false, true>(8192, 4096, "[1,8192,4096]"); },
      // Rows of 4096 at 16 MiB with a weight per buffer set, as kernels_bench has it: the L1 read's
      // cold cost differed between the probe and kernels_bench (version 20).
      [] { return rms<bf16, false, true>(2048, 4096, "[1,2048,4096]"); },
  };
  for (auto& make : all) {
    Workload w = make();
    // The shipped kernel again at the end: the first candidate's graph replays of a large workload
    // have run up to 0.8 us slower than the same kernel later in the list.
    w.candidates.push_back({"shipped, again", w.candidates[0].second});
    for (int k = 0; k < g_repeat_first; ++k)
      w.candidates.insert(w.candidates.begin() + 1, {"shipped, repeated", w.candidates[0].second});
    CHECK(cudaDeviceSynchronize());
    run(w, filter);
    CHECK(cudaDeviceSynchronize());
    for (void* p : g_allocs) CHECK(cudaFree(p));
    g_allocs.clear();
  }
  FILE* f = std::fopen(json.c_str(), "w");
  if (f) {
    std::fprintf(f, "{\"gpu\":\"%s\",\"results\":[\n%s\n]}\n", prop.name, g_json.c_str());
    std::fclose(f);
  }
  return 0;
}
