// Timing support for kernels_bench: a case is a set of input buffers and a call; the harness
// measures cold (rotated buffer sets), warm (CUDA graph) and host-path times.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace khub_bench {

struct Case {
  std::string op;       // e.g. rms_norm
  std::string shape;    // e.g. [2,2688,2048]
  std::string dtype;    // activations' dtype: bfloat16, float16 or float32
  double bytes = 0;     // minimum traffic: inputs read once + outputs written once
  // Makes one buffer set (inputs) and returns the call on it (returns an output to keep alive).
  std::function<std::function<at::Tensor()>()> make;
};

// All benchmark cases; `load` resolves a kernel's variant dir to its op namespace id.
std::vector<Case> all_cases();

// The pieces of one few-row RMSNorm call's host time ([1,128,4096] bf16), each a call to time on
// its own: the whole op; the op on zero rows (dispatcher, checks, device guard, output of no
// bytes: everything but the allocation and the launch); the output's allocation (`at::empty`);
// a plain kernel launch (`at::cuda::sleep(0)`, no PDL attribute); the device guard and stream.
std::vector<std::pair<std::string, std::function<void()>>> host_pieces();

const std::string& variant_id(const std::string& kernel);

}  // namespace khub_bench
