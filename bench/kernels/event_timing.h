#pragma once
// CUDA-event timing shared by kernels_bench (through LibTorch) and the probe (torch-free): median
// and spread of per-call times, each call bracketed by its own pair of events, optionally after a
// `gap` (a sleep kernel) that keeps host launch time out of the window.
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace khub_bench {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

struct Stats {
  double median = 0, p10 = 0, p90 = 0;
};

inline Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)]; };
  return {at(0.5), at(0.1), at(0.9)};
}

// Times body(i) for i in [0, reps) on `stream`, in microseconds; `gap` (may be empty) runs before
// each call's start event.
inline std::vector<double> time_events(cudaStream_t stream, int reps, const std::function<void()>& gap,
                                       const std::function<void(int)>& body) {
  std::vector<cudaEvent_t> ev(2 * reps);
  for (auto& e : ev) check(cudaEventCreate(&e), "cudaEventCreate");
  for (int i = 0; i < reps; ++i) {
    if (gap) gap();
    check(cudaEventRecord(ev[2 * i], stream), "cudaEventRecord");
    body(i);
    check(cudaEventRecord(ev[2 * i + 1], stream), "cudaEventRecord");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<double> us(reps);
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
    us[i] = ms * 1e3;
  }
  for (auto& e : ev) cudaEventDestroy(e);
  return us;
}

}  // namespace khub_bench
