// Copy references timed like the ops: copy16, the copy engine (bulk), pair16, convert16, and
// streaming copies under other cache hints.
#pragma once
#include "harness.cuh"

namespace probe {

// 16-byte copy with the kernels' own load and store hints (ldg_stream, st.global.cs); with a plain
// store it ran 2-3 % slower than cudaMemcpyAsync on the H200.
static __global__ void copy_kernel(const uint4* __restrict__ a, uint4* __restrict__ b, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) __stcs(b + i, kc::ldg_stream(a + i));
}

// The copy engine's floor: each block moves one Chunk-byte piece with cp.async.bulk, global ->
// shared (completion on an mbarrier) -> global, from one thread. A block keeps Chunk bytes in
// flight (7 x 32 KB an SM against copy16's 2048 x 16 B), so this asks whether the ops' cold times,
// which sit near copy16's, are bound by how many bytes per-thread loads keep in flight. On the
// H200: cold level with copy16 for the bytes of the 24-44 MB ops and 3-8 % slower from
// 88 MB; in graph replay (inputs in L2) 3-14 % faster for those small ops, 6 % slower at 88 MB.
template <int Chunk>
static __global__ void __launch_bounds__(32) bulk_copy_kernel(const char* __restrict__ a, char* __restrict__ b, int64_t bytes) {
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
inline void bulk_copy(const void* a, void* b, int64_t bytes, cudaStream_t stream) {
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
static __global__ void pair_kernel(const uint4* __restrict__ a, uint4* __restrict__ b, int64_t rows, int64_t cols) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= rows * cols) return;
  const int64_t r = i / cols, c = i - r * cols;
  const uint4 x = kc::ldg_stream(a + 2 * r * cols + c), g = kc::ldg_stream(a + 2 * r * cols + cols + c);
  __stcs(b + i, make_uint4(x.x ^ g.x, x.y ^ g.y, x.z ^ g.z, x.w ^ g.w));
}

// copy16 plus a bf16 -> fp32 -> bf16 round trip with one multiply per element.
static __global__ void convert_kernel(const uint4* __restrict__ a, uint4* __restrict__ b, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  kc::Pack16<bf16> p;
  p.u = kc::ldg_stream(a + i);
#pragma unroll
  for (int k = 0; k < 8; ++k) p.t[k] = __float2bfloat16_rn(__bfloat162float(p.t[k]) * 1.0001f);
  __stcs(b + i, p.u);
}

// References: cudaMemcpyAsync and a 16-byte copy kernel moving the op's bytes (half read, half written).
inline void add_copies(Workload& w) {
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
static __global__ void copy_policy_kernel(const uint4* __restrict__ a, uint4* __restrict__ b, int64_t n) {
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

inline Workload copy_policies(int64_t bytes_each_way) {
  Workload w;
  w.op = "copy_policy";
  w.shape = std::to_string(bytes_each_way >> 20) + "MiB";
  w.bytes = 2.0 * bytes_each_way;
  w.sets = sets_for(w.bytes);
  const int64_t vecs = bytes_each_way / 16;
  const auto a = fills<float>(w.sets, bytes_each_way / 4, 800);
  const auto b = fills<float>(kGraphCalls, bytes_each_way / 4, 1);
  w.outputs.push_back(output_of<bf16>(b[0], bytes_each_way / 2));
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

}  // namespace probe
