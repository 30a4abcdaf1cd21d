// Kernel launch with programmatic dependent launch (PDL, sm_90): the grid may be scheduled while
// the previous kernel in the stream drains, so launch latency and the previous kernel's tail
// overlap (in CUDA graphs too: capture turns the attribute into programmatic edges). Every kernel
// launched here calls `wait_for_previous_grid()` before its first global memory access, which
// blocks until the previous grid has completed and its writes are visible, so reads after writes
// and writes after reads across kernels stay ordered. KHUB_KERNELS_PDL=0 launches plainly.
#pragma once
#include <cuda_runtime.h>

#include <cstdlib>
#include <utility>

namespace khub_kernels::cuda {

inline bool& pdl_enabled() {
  static bool on = [] {
    const char* e = std::getenv("KHUB_KERNELS_PDL");
    return !(e && e[0] == '0');
  }();
  return on;
}

// First statement of every kernel launched with `launch()`. Blocks among the grid's last
// kTriggerTail let dependents launch right away: they are only scheduled once every block of this
// grid has done so or exited, and they wait here in turn before touching memory. Earlier blocks
// don't trigger: the instruction costs enough that grids of many short blocks (GELU-tanh, q/k
// norm) ran 13-17 % slower on the H200 when every block issued it, and
// those blocks exit before the tail starts anyway.
constexpr unsigned kTriggerTail = 2048;  // >= blocks resident at once (132 SMs x up to 16)

__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const unsigned block = blockIdx.y * gridDim.x + blockIdx.x, blocks = gridDim.x * gridDim.y;
  if (blocks - block <= kTriggerTail) asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

template <typename... Params, typename... Args>
cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = pdl_enabled() ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace khub_kernels::cuda
