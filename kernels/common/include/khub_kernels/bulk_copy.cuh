// Tiles fetched by the copy engine (cp.async.bulk, sm_90): one thread asks for a whole tile of
// global memory, the bytes land in shared memory, and their arrival is counted on an mbarrier the
// block waits on. A block then keeps its whole tile in flight from one instruction, where 16-byte
// loads need a thread each; reads that hit L2 ran faster this way (docs/gpu-measurements.md,
// version 20). No torch.
#pragma once
#include <cstdint>

namespace khub_kernels::cuda {

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Thread 0 only: a fresh one-arrival barrier expecting `bytes` of tile. The caller makes the
// initialisation visible to the block (__syncthreads) before any thread waits on it.
__device__ __forceinline__ void bulk_begin(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}

// Thread 0 only: copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global src
// to shared dst, counted on bar.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(shared_address(dst)), "l"(src), "r"(bytes), "r"(shared_address(bar))
               : "memory");
}

// Every thread: returns once all the bytes bulk_begin announced have landed.
__device__ __forceinline__ void bulk_wait(uint64_t* bar) {
  unsigned done = 0;
  while (!done) {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(shared_address(bar))
                 : "memory");
  }
}

}  // namespace khub_kernels::cuda
