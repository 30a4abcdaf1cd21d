// ffi_rmsnorm_app: RMSNorm from a Kernel Hub in a program without LibTorch. khub::ffi picks the tvm-ffi build
// Python's `kernels` would pick on a torch-less host, verifies and loads it through libtvm_ffi.so; the
// program passes DLPack views of its own buffers and checks the result against a plain C++ reference — on
// the CPU, and on the GPU too when the variant is a CUDA build and a GPU is there (CUDA memory and a stream
// from libcudart, opened with dlopen: nothing CUDA at build time either).
//   ffi_rmsnorm_app                 get_kernel("user/rmsnorm", {.version = 1}) from HF_ENDPOINT
//   ffi_rmsnorm_app <path>          get_local_kernel(<path>): a repo, its build/, or a variant dir
#include <dlfcn.h>
#include <khub/ffi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int64_t kRows = 8, kCols = 4096;
constexpr double kEps = 1e-6;

// y = x / sqrt(mean(x^2) + eps) * w, in double.
std::vector<float> reference(const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < kRows; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < kCols; ++c) ss += double(x[r * kCols + c]) * x[r * kCols + c];
    const double inv = 1.0 / std::sqrt(ss / kCols + kEps);
    for (int64_t c = 0; c < kCols; ++c) y[r * kCols + c] = float(x[r * kCols + c] * inv * w[c]);
  }
  return y;
}

double max_error(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - b[i]));
  return m;
}

// A DLTensor view of `data` (contiguous, so strides may stay null) on `device`.
DLTensor view(void* data, int64_t* shape, int ndim, DLDevice device) {
  DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = ndim;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

// The few CUDA runtime calls the GPU run needs, from libcudart through dlopen.
struct Cuda {
  int (*get_device_count)(int*) = nullptr;
  int (*malloc)(void**, size_t) = nullptr;
  int (*free)(void*) = nullptr;
  int (*memcpy)(void*, const void*, size_t, int) = nullptr;  // kind: 1 host→device, 2 device→host
  int (*stream_create)(void**) = nullptr;
  int (*stream_synchronize)(void*) = nullptr;
  bool load() {
    void* h = nullptr;
    for (const char* name : {"libcudart.so", "libcudart.so.13", "libcudart.so.12"})
      if ((h = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!h) return false;
    get_device_count = reinterpret_cast<int (*)(int*)>(dlsym(h, "cudaGetDeviceCount"));
    malloc = reinterpret_cast<int (*)(void**, size_t)>(dlsym(h, "cudaMalloc"));
    free = reinterpret_cast<int (*)(void*)>(dlsym(h, "cudaFree"));
    memcpy = reinterpret_cast<int (*)(void*, const void*, size_t, int)>(dlsym(h, "cudaMemcpy"));
    stream_create = reinterpret_cast<int (*)(void**)>(dlsym(h, "cudaStreamCreate"));
    stream_synchronize = reinterpret_cast<int (*)(void*)>(dlsym(h, "cudaStreamSynchronize"));
    int n = 0;
    return get_device_count && malloc && free && memcpy && stream_create && stream_synchronize &&
           get_device_count(&n) == 0 && n > 0;
  }
};

bool check(const char* where, const std::vector<float>& y, const std::vector<float>& want) {
  const double err = max_error(y, want);
  const bool ok = err < 1e-4;
  std::printf("%s: max |y - reference| = %.2e: %s\n", where, err, ok ? "matches" : "DIFFERS");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  auto kernel = argc > 1 ? khub::ffi::get_local_kernel(argv[1]) : khub::ffi::get_kernel("user/rmsnorm", {.version = 1});
  if (!kernel) return std::fprintf(stderr, "error: %s\n", kernel.error().describe().c_str()), 1;
  auto rt = khub::ffi::runtime();
  std::printf("variant %s (id %s), tvm-ffi %s.%d from %s\n", kernel->variant().c_str(), kernel->id().c_str(),
              rt->version.str().c_str(), rt->patch, rt->library.c_str());
  std::string names;
  for (const auto& f : kernel->functions()) names += (names.empty() ? "" : ", ") + f;
  std::printf("functions: %s\n", names.c_str());

  std::mt19937 rng(0);
  std::normal_distribution<float> normal;
  std::vector<float> x(kRows * kCols), w(kCols), y(kRows * kCols);
  for (auto& v : x) v = normal(rng);
  for (auto& v : w) v = 1.0f + 0.1f * normal(rng);
  const std::vector<float> want = reference(x, w);
  int64_t shape_x[2] = {kRows, kCols}, shape_w[1] = {kCols};

  // CPU: `rms_norm_cpu(out, x, weight, eps)` on the program's own vectors.
  auto cpu = kernel->function_for("rms_norm", kDLCPU);
  if (!cpu) return std::fprintf(stderr, "error: %s\n", cpu.error().describe().c_str()), 1;
  const DLDevice host{kDLCPU, 0};
  DLTensor tx = view(x.data(), shape_x, 2, host), tw = view(w.data(), shape_w, 1, host), ty = view(y.data(), shape_x, 2, host);
  auto r = cpu->call({&ty, &tx, &tw, kEps});
  if (!r) return std::fprintf(stderr, "error: %s\n", r.error().describe().c_str()), 1;
  bool ok = check("cpu", y, want);

  // A kernel error comes back with its kind and message (an int32 input).
  std::vector<int32_t> xi(kRows * kCols);
  DLTensor ti = view(xi.data(), shape_x, 2, host);
  ti.dtype = DLDataType{kDLInt, 32, 1};
  auto bad = cpu->call({&ty, &ti, nullptr, kEps});
  std::printf("int32 input: %s\n", bad ? "accepted?!" : bad.error().describe().c_str());
  ok = ok && !bad && bad.error().kind == "TypeError";

  // CUDA: the same call on device buffers and a stream of the program's own.
  Cuda cuda;
  if (kernel->variant().find("-cu") != std::string::npos && cuda.load()) {
    auto gpu = kernel->function_for("rms_norm", kDLCUDA);
    if (!gpu) return std::fprintf(stderr, "error: %s\n", gpu.error().describe().c_str()), 1;
    void *dx = nullptr, *dw = nullptr, *dy = nullptr, *stream = nullptr;
    const size_t bytes = x.size() * sizeof(float);
    if (cuda.malloc(&dx, bytes) || cuda.malloc(&dw, kCols * sizeof(float)) || cuda.malloc(&dy, bytes) ||
        cuda.stream_create(&stream) || cuda.memcpy(dx, x.data(), bytes, 1) ||
        cuda.memcpy(dw, w.data(), kCols * sizeof(float), 1))
      return std::fprintf(stderr, "error: CUDA allocation or copy failed\n"), 1;
    const DLDevice dev{kDLCUDA, 0};
    DLTensor gx = view(dx, shape_x, 2, dev), gw = view(dw, shape_w, 1, dev), gy = view(dy, shape_x, 2, dev);
    auto rg = gpu->call({&gy, &gx, &gw, kEps}, {.stream = stream});
    if (!rg) return std::fprintf(stderr, "error: %s\n", rg.error().describe().c_str()), 1;
    std::vector<float> yg(y.size());
    if (cuda.stream_synchronize(stream) || cuda.memcpy(yg.data(), dy, bytes, 2))
      return std::fprintf(stderr, "error: CUDA copy back failed\n"), 1;
    ok = check("cuda", yg, want) && ok;
    cuda.free(dx), cuda.free(dw), cuda.free(dy);
  } else {
    std::printf("cuda: skipped (%s)\n", kernel->variant().find("-cu") == std::string::npos ? "a cpu variant" : "no GPU");
  }
  std::printf("%s\n", ok ? "ffi_rmsnorm_app: all checks passed" : "ffi_rmsnorm_app: FAILED");
  return ok ? 0 : 1;
}
