// torch.compile's own kernel for a workload, as a probe candidate: compile_code.py --export DIR writes
// each case's autotuned Triton kernel to DIR/<op>_<shape>_<dtype>/ (kernel.cubin, kernel.ptx,
// launch.txt); probe --inductor DIR loads it with the driver API and launches it on the workload's
// buffers, so inductor's kernel and khub's are timed on the same inputs, outputs and harness. The
// output check against the shipped kernel catches a wrong argument mapping.
#pragma once
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "harness.cuh"

namespace probe {

inline std::string g_inductor_dir;  // --inductor DIR; empty: no inductor candidates

struct InductorKernel {
  CUfunction fn = nullptr;
  unsigned grid = 0, block = 0, shared = 0;
  std::vector<std::string> args;  // in_ptr0 ... out_ptrK, xnumel=N ...: the kernel's arguments in order
  int ptx_params = 0;             // the .entry's parameter count (Triton appends scratch pointers)
};

// The .entry's parameter count in the kernel's PTX.
inline int ptx_param_count(const std::string& ptx_path) {
  std::ifstream f(ptx_path);
  std::string line;
  bool in_entry = false;
  int n = 0;
  while (std::getline(f, line)) {
    if (line.find(".entry") != std::string::npos) in_entry = true;
    else if (in_entry && line.find(')') == 0) break;
    else if (in_entry && line.find(".param") != std::string::npos) ++n;
  }
  return n;
}

// The exported kernel of `tag`, or fn == nullptr: silently where none was exported, with the reason
// printed where an export exists but cannot be used.
inline InductorKernel load_inductor(const std::string& tag) {
  InductorKernel k;
  if (g_inductor_dir.empty()) return k;
  const std::string dir = g_inductor_dir + "/" + tag;
  std::ifstream f(dir + "/launch.txt");
  if (!f) return k;  // not exported for this workload
  std::string line, name;
  while (std::getline(f, line)) {
    std::istringstream s(line);
    std::string key;
    s >> key;
    if (key == "name") s >> name;
    else if (key == "grid") s >> k.grid;
    else if (key == "block") s >> k.block;
    else if (key == "shared") s >> k.shared;
    else if (key == "args")
      for (std::string a; s >> a;) k.args.push_back(a);
  }
  k.ptx_params = ptx_param_count(dir + "/kernel.ptx");
  if (k.ptx_params < static_cast<int>(k.args.size())) {
    std::printf("inductor: %s has %d parameters in its PTX, launch.txt names %zu\n", tag.c_str(), k.ptx_params,
                k.args.size());
    return k;
  }
  CUmodule mod;
  if (cuModuleLoad(&mod, (dir + "/kernel.cubin").c_str()) != CUDA_SUCCESS ||
      cuModuleGetFunction(&k.fn, mod, name.c_str()) != CUDA_SUCCESS) {
    std::printf("inductor: cannot load %s from %s/kernel.cubin\n", name.c_str(), dir.c_str());
    k.fn = nullptr;
    return k;
  }
  if (k.shared > 48 * 1024 &&
      cuFuncSetAttribute(k.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.shared) != CUDA_SUCCESS)
    k.fn = nullptr;
  return k;
}

// Launches k with the pointer arguments in order (inputs then outputs, as inductor numbers them),
// the integer ones from launch.txt and null for the scratch pointers Triton appends.
inline void launch_inductor(const InductorKernel& k, const std::vector<const void*>& ptrs) {
  std::vector<uint64_t> ptr_vals;
  std::vector<uint32_t> int_vals;
  // Reserved up front: params points into both vectors.
  ptr_vals.reserve(k.ptx_params);
  int_vals.reserve(k.ptx_params);
  std::vector<void*> params;
  size_t next_ptr = 0;
  for (const std::string& a : k.args) {
    const auto eq = a.find('=');
    if (eq == std::string::npos) {
      ptr_vals.push_back(reinterpret_cast<uint64_t>(next_ptr < ptrs.size() ? ptrs[next_ptr] : nullptr));
      ++next_ptr;
      params.push_back(&ptr_vals.back());
    } else {
      int_vals.push_back(static_cast<uint32_t>(std::stoul(a.substr(eq + 1))));
      params.push_back(&int_vals.back());
    }
  }
  while (static_cast<int>(params.size()) < k.ptx_params) {
    ptr_vals.push_back(0);
    params.push_back(&ptr_vals.back());
  }
  if (cuLaunchKernel(k.fn, k.grid, 1, 1, k.block, 1, 1, k.shared, g_stream, params.data(), nullptr) != CUDA_SUCCESS) {
    std::fprintf(stderr, "inductor kernel launch failed\n");
    std::exit(1);
  }
}

// "[1,8192,4096]" + T -> "fused_add_rms_norm_1x8192x4096_bfloat16", compile_code.py's folder name.
template <typename T>
std::string inductor_tag(const std::string& op, const std::string& shape) {
  std::string dims;
  for (char c : shape)
    if (c == ',') dims += 'x';
    else if (c != '[' && c != ']' && c != ' ') dims += c;
  const char* dt = std::is_same_v<T, float> ? "float32" : std::is_same_v<T, __half> ? "float16" : "bfloat16";
  return op + "_" + dims + "_" + dt;
}

}  // namespace probe
