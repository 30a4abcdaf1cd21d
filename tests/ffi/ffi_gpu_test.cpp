// khub::ffi on CUDA (label gpu; the H200 machine): each bundled kernel's tvm-ffi cu130 build, from the local
// hub, on device buffers (cudaMalloc) with the test's own stream passed per call; results equal the same
// build's CPU functions (the kernels' CUDA and CPU implementations round alike within the tolerance), and
// the stream the call ran on is the one given (a call queued behind a host-blocked event on that stream
// has not run until the event fires). Links the CUDA runtime, never torch.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "ffi_localhub_support.h"
#include "ffi_test_support.h"
#include "test_util.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;
using namespace khub::ffi;
using namespace khub::ffi::test;

// A device copy of a host Buffer, with a DLTensor view on cuda:0.
struct DeviceBuffer {
  DLTensor tensor{};
  size_t bytes = 0;
  explicit DeviceBuffer(Buffer& host) : bytes(host.data.size() * sizeof(float)) {
    tensor = host.tensor;
    tensor.device = DLDevice{kDLCUDA, 0};
    EXPECT_EQ(cudaMalloc(&tensor.data, bytes), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(tensor.data, host.data.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(tensor.data); }
  DLTensor* t() { return &tensor; }
  std::vector<float> to_host() const {
    std::vector<float> out(bytes / sizeof(float));
    EXPECT_EQ(cudaMemcpy(out.data(), tensor.data, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
};

class FfiGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA device";
    server_ = start_hub(dir_.path() / "hub");
    // Non-blocking: a launch that went to the legacy default stream instead would not wait behind it.
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
    hub::drop_shared_clients();
    if (server_) server_->stop();
  }
  Expected<Kernel> load(const std::string& name) {
    auto pushed = push(fs::path(KHUB_KERNELS_DIR) / name / "build", *server_, "org/" + name);
    if (!pushed) return std::move(pushed).error();
    return get_kernel("org/" + name, version_1_from(*server_, dir_.path() / "cache"));
  }
  khub::test::TempDir dir_;
  std::unique_ptr<localhub::Server> server_;
  cudaStream_t stream_ = nullptr;
};

TEST_F(FfiGpu, RmsNormOnDeviceBuffersAndTheCallersStream) {
  auto k = load("rmsnorm");
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->variant().rfind("tvm-ffi01-cu", 0), 0u) << k->variant();
  std::mt19937 rng(1);
  Buffer x({64, 4096}), w({4096}), y({64, 4096});
  x.randomize(rng), w.randomize(rng, 0.1f, 1.0f);
  DeviceBuffer dx(x), dw(w), dy(y);
  auto f = k->function_for("rms_norm", kDLCUDA);
  ASSERT_TRUE(f) << f.error().describe();
  EXPECT_EQ(f->name(), "rms_norm_cuda");
  auto r = f->call({dy.t(), dx.t(), dw.t(), 1e-6}, {.stream = stream_});
  ASSERT_TRUE(r) << r.error().describe();
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_LT(max_diff(dy.to_host(), rms_norm_ref(x.data, &w.data, 4096, 1e-6)), 1e-4);

  // A CPU tensor given to the CUDA function is refused with its kind.
  auto wrong = f->call({y.t(), x.t(), w.t(), 1e-6}, {.stream = stream_});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().kind, "ValueError");
  EXPECT_NE(wrong.error().message.find("expected CUDA tensors"), std::string::npos) << wrong.error().message;
}

TEST_F(FfiGpu, KernelRunsOnTheGivenStream) {
  auto k = load("rmsnorm");
  ASSERT_TRUE(k) << k.error().describe();
  auto f = k->function("rms_norm_cuda");
  ASSERT_TRUE(f);
  std::mt19937 rng(2);
  Buffer x({256, 4096}), y({256, 4096}, -1.0f);
  x.randomize(rng);
  DeviceBuffer dx(x), dy(y);
  // The first launch of a module's kernel may load it lazily (CUDA_MODULE_LOADING=LAZY, CUDA's default),
  // and that load synchronizes the context: it would wait on the held stream below. Launch once first.
  ASSERT_TRUE(f->call({dy.t(), dx.t(), nullptr, 1e-6}, {.stream = stream_}));
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dy.tensor.data, y.data.data(), dy.bytes, cudaMemcpyHostToDevice), cudaSuccess);
  // Everything the probe needs is allocated before the hold (allocations may synchronize too).
  cudaStream_t probe = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&probe, cudaStreamNonBlocking), cudaSuccess);
  float* before = nullptr;
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&before), sizeof(float)), cudaSuccess);
  // Hold the stream: a host function that spins until released (or 30 s, so nothing can hang) runs first.
  static std::atomic<bool> release{false}, expired{false};
  release = false, expired = false;
  ASSERT_EQ(cudaLaunchHostFunc(
                stream_,
                [](void*) {
                  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
                  while (!release) {
                    if (std::chrono::steady_clock::now() > until) return void(expired = true);
                  }
                },
                nullptr),
            cudaSuccess);
  ASSERT_TRUE(f->call({dy.t(), dx.t(), nullptr, 1e-6}, {.stream = stream_}));
  // A stream of its own sees y still holding the fill: the kernel waits behind the hold on our stream.
  ASSERT_EQ(cudaMemcpyAsync(before, dy.tensor.data, sizeof(float), cudaMemcpyDeviceToHost, probe), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(probe), cudaSuccess);
  release = true;
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_FALSE(expired) << "the probe copy waited for the held stream (something synchronized the context)";
  EXPECT_EQ(*before, -1.0f);
  cudaFreeHost(before);
  cudaStreamDestroy(probe);
  EXPECT_LT(max_diff(dy.to_host(), rms_norm_ref(x.data, nullptr, 4096, 1e-6)), 1e-4);
}

TEST_F(FfiGpu, EveryBundledKernelsCudaFunctionMatchesItsCpuFunction) {
  for (const auto& name : bundled_kernels()) {
    SCOPED_TRACE(name);
    auto k = load(name);
    ASSERT_TRUE(k) << k.error().describe();
    std::mt19937 rng(5);
    if (name == "rmsnorm" || name == "geglu") {
      const bool g = name == "geglu";
      Buffer x({32, 1024}), y({32, g ? 512 : 1024});
      x.randomize(rng);
      DeviceBuffer dx(x), dy(y);
      const std::string op = g ? "geglu" : "rms_norm";
      auto cpu = k->function(op + "_cpu"), gpu = k->function(op + "_cuda");
      ASSERT_TRUE(cpu && gpu);
      ASSERT_TRUE(g ? cpu->call({y.t(), x.t(), false}) : cpu->call({y.t(), x.t(), nullptr, 1e-6}));
      ASSERT_TRUE(g ? gpu->call({dy.t(), dx.t(), false}, {.stream = stream_})
                    : gpu->call({dy.t(), dx.t(), nullptr, 1e-6}, {.stream = stream_}));
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      EXPECT_LT(max_diff(dy.to_host(), y.data), 1e-4);
    } else if (name == "adaln") {
      Buffer x({2, 16, 256}), scale({2, 1, 256}), shift({2, 1, 256}), y({2, 16, 256});
      x.randomize(rng), scale.randomize(rng, 0.1f), shift.randomize(rng, 0.1f);
      DeviceBuffer dx(x), ds(scale), dh(shift), dy(y);
      ASSERT_TRUE(k->function("adaln_rms_cpu")->call({y.t(), x.t(), scale.t(), shift.t(), 1e-6}));
      ASSERT_TRUE(k->function("adaln_rms_cuda")->call({dy.t(), dx.t(), ds.t(), dh.t(), 1e-6}, {.stream = stream_}));
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      EXPECT_LT(max_diff(dy.to_host(), y.data), 1e-4);
    } else {
      Buffer x({2, 16, 96}), cos({1, 16, 96}), sin({1, 16, 96}), y({2, 16, 96});
      x.randomize(rng), cos.randomize(rng), sin.randomize(rng);
      DeviceBuffer dx(x), dc(cos), ds(sin), dy(y);
      ASSERT_TRUE(k->function("apply_rotary_emb_cpu")->call({y.t(), x.t(), cos.t(), sin.t()}));
      ASSERT_TRUE(k->function("apply_rotary_emb_cuda")->call({dy.t(), dx.t(), dc.t(), ds.t()}, {.stream = stream_}));
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
      EXPECT_LT(max_diff(dy.to_host(), y.data), 1e-4);
    }
  }
}

}  // namespace
