// khub::ffi without a hub: the runtime (libtvm_ffi.so), host facts without torch, variant choice for such a
// host, the export listing, and each bundled kernel's tvm-ffi build loaded from kernels/<k>/build and called
// on the CPU over the test's own buffers (results, error kinds and messages, lookup errors). No torch.
#include <dlfcn.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "../../hubclient/ffi/src/exports.h"
#include "ffi_test_support.h"
#include "khub/variants/resolve.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;
using namespace khub::ffi;
using namespace khub::ffi::test;

fs::path build_dir(const std::string& kernel) { return fs::path(KHUB_KERNELS_DIR) / kernel / "build"; }

fs::path variant_dir(const std::string& kernel, const std::string& prefix) {
  for (const auto& e : fs::directory_iterator(build_dir(kernel)))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return e.path();
  return {};
}

TEST(FfiRuntime, LoadsLibTvmFfiAndReportsItsVersion) {
  auto rt = runtime();
  ASSERT_TRUE(rt) << rt.error().describe();
  EXPECT_EQ(rt->version, (variants::Version{0, 1}));
  EXPECT_GE(rt->patch, 15);
  EXPECT_EQ(rt->library.filename(), "libtvm_ffi.so");
  // Loaded globally: a kernel module's bare NEEDED entry binds to it.
  EXPECT_NE(dlopen("libtvm_ffi.so", RTLD_NOW | RTLD_NOLOAD), nullptr);
  auto again = load_runtime(rt->library);
  ASSERT_TRUE(again) << again.error().describe();
  auto other = load_runtime("/nonexistent/libtvm_ffi.so");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, ErrorCode::InvalidArgument);
}

TEST(FfiHost, TorchlessHostWithTheRuntimesTvmFfiVersion) {
  const variants::HostInfo& host = current_host();
  EXPECT_FALSE(host.torch);
  EXPECT_FALSE(host.cxx11_abi);
  ASSERT_TRUE(host.tvm_ffi);
  EXPECT_EQ(*host.tvm_ffi, runtime()->version);
  const variants::HostInfo plain = variants::detect_host_without_torch();
  EXPECT_EQ(host.backend, plain.backend);  // CUDA from libcudart, else cpu: as kernels without torch
  EXPECT_EQ(host.os, plain.os);
  EXPECT_EQ(host.cpu, plain.cpu);
}

// A torch-less host with tvm-ffi 0.1 accepts only tvm-ffi and noarch builds; tvm-ffi ranks first, so the
// variant khub::ffi loads is the one Python's kernels chooses (the first accepted).
TEST(FfiVariants, TvmFfiChoiceIsThePreferredOneOnATorchlessHost) {
  variants::HostInfo host;
  host.tvm_ffi = variants::Version{0, 1};
  host.backend = variants::Backend{variants::BackendKind::Cuda, variants::Version{13, 0}};
  const std::vector<std::string> names{"torch-stable-abi210-cu130-x86_64-linux", "torch212-cxx11-cu130-x86_64-linux",
                                       "tvm-ffi01-cpu-x86_64-linux", "tvm-ffi01-cu130-x86_64-linux",
                                       "tvm-ffi01-cu126-x86_64-linux", "tvm-ffi02-cu130-x86_64-linux", "torch-cuda"};
  auto r = variants::resolve_variants(names, host);
  ASSERT_NE(r.chosen(), nullptr);
  EXPECT_EQ(r.chosen()->name, "tvm-ffi01-cu130-x86_64-linux");
  EXPECT_EQ(variants::first_loadable(r, variants::NativeRuntime::TvmFfi), r.chosen());
  EXPECT_EQ(variants::first_loadable(r, variants::NativeRuntime::Torch), nullptr);
  host.backend = variants::Backend{variants::BackendKind::Cpu, std::nullopt};
  r = variants::resolve_variants(names, host);
  EXPECT_EQ(variants::first_loadable(r, variants::NativeRuntime::TvmFfi)->name, "tvm-ffi01-cpu-x86_64-linux");
  // Only noarch fits: no variant loads without Python.
  auto only_noarch = variants::choose_loadable(variants::resolve_variants({"torch-cpu", "torch212-cxx11-cpu-x86_64-linux"}, host),
                                               "org/k (revision: v1)", variants::NativeRuntime::TvmFfi);
  ASSERT_FALSE(only_noarch);
  EXPECT_EQ(only_noarch.error().code, ErrorCode::NoVariant);
  EXPECT_NE(only_noarch.error().hint.find("tvm-ffi build"), std::string::npos) << only_noarch.error().hint;
}

// A build of another kind: the tvm-ffi CPU build's files under a stable-ABI variant's name (the name
// says the kind; a copy, since a build without LibTorch has made no stable-ABI variant).
TEST(FfiLocal, NoTvmFfiBuildSaysSo) {
  const fs::path from = variant_dir("rmsnorm", "tvm-ffi01-cpu");
  ASSERT_FALSE(from.empty());
  const fs::path root = fs::temp_directory_path() / ("khub-ffi-kind-" + std::to_string(::getpid()));
  const fs::path dir = root / "torch-stable-abi210-cpu-x86_64-linux";
  fs::create_directories(root);
  fs::copy(from, dir, fs::copy_options::recursive);
  auto k = get_local_kernel(dir);
  fs::remove_all(root);
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(k.error().message.find("not a tvm-ffi build"), std::string::npos) << k.error().describe();
}

TEST(FfiExports, ListsTheModulesFunctions) {
  const fs::path dir = variant_dir("rmsnorm", "tvm-ffi01-cpu");
  ASSERT_FALSE(dir.empty());
  fs::path so;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".so") so = e.path();
  EXPECT_EQ(exported_functions(so),
            (std::vector<std::string>{"fused_add_rms_norm_cpu", "rms_norm_cpu", "rms_norm_rounding_cpu"}));
  EXPECT_TRUE(exported_functions(dir / "metadata.json").empty());
  EXPECT_TRUE(exported_functions(dir / "missing.so").empty());
}

class FfiBundled : public ::testing::TestWithParam<std::string> {};

// get_local_kernel on kernels/<k>/build picks the tvm-ffi build (cpu: backend override), loads it once, and
// its op computes what the plain C++ reference computes.
TEST_P(FfiBundled, LoadsFromBuildDirAndComputesOnCpu) {
  const std::string name = GetParam();
  auto k = get_local_kernel(build_dir(name), "cpu");
  ASSERT_TRUE(k) << k.error().describe();
  EXPECT_EQ(k->variant(), "tvm-ffi01-cpu-x86_64-linux");
  EXPECT_TRUE(k->verified());
  EXPECT_EQ(k->module_path().filename(), k->id() + ".so");
  ASSERT_FALSE(k->functions().empty());
  for (const auto& f : k->functions()) EXPECT_TRUE(f.ends_with("_cpu")) << f;
  expect_kernel_computes(*k, name);
  // The CUDA build serves CPU tensors too (`<op>_cpu` in every variant) and lists its CUDA functions.
  // A build without CUDA (the sanitizer build) has made no CUDA variant.
  const fs::path cuda_dir = variant_dir(name, "tvm-ffi01-cu");
  if (cuda_dir.empty()) return;
  auto cuda = get_local_kernel(cuda_dir);
  if (cuda) {
    bool has_cuda_fn = false;
    for (const auto& f : cuda->functions()) has_cuda_fn = has_cuda_fn || f.ends_with("_cuda");
    EXPECT_TRUE(has_cuda_fn);
    expect_kernel_computes(*cuda, name);
  } else {
    EXPECT_EQ(cuda.error().code, ErrorCode::LoadFailed) << cuda.error().describe();  // no libcudart here
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, FfiBundled, ::testing::ValuesIn(bundled_kernels()));

class FfiRmsNorm : public ::testing::Test {
 protected:
  void SetUp() override {
    auto k = get_local_kernel(build_dir("rmsnorm"), "cpu");
    ASSERT_TRUE(k) << k.error().describe();
    kernel_.emplace(std::move(k).value());
  }
  std::optional<Kernel> kernel_;
};

TEST_F(FfiRmsNorm, ErrorsCarryKindAndMessage) {
  auto f = kernel_->function("rms_norm_cpu");
  ASSERT_TRUE(f);
  Buffer x({2, 64}), y({2, 64}), w({32});
  auto bad_shape = f->call({y.t(), x.t(), w.t(), 1e-6});
  ASSERT_FALSE(bad_shape);
  EXPECT_EQ(bad_shape.error().kind, "ValueError");
  EXPECT_EQ(bad_shape.error().message, "rms_norm: weight must have shape [64], got [32]");
  EXPECT_EQ(bad_shape.error().function, "rms_norm_cpu");
  EXPECT_EQ(bad_shape.error().describe(), "rms_norm_cpu: ValueError: rms_norm: weight must have shape [64], got [32]");
  const Error as_error = bad_shape.error().to_error();
  EXPECT_EQ(as_error.code, ErrorCode::InvalidArgument);

  x.tensor.dtype = DLDataType{kDLInt, 32, 1};
  auto bad_dtype = f->call({y.t(), x.t(), nullptr, 1e-6});
  ASSERT_FALSE(bad_dtype);
  EXPECT_EQ(bad_dtype.error().kind, "TypeError");
  EXPECT_EQ(bad_dtype.error().message, "x: unsupported dtype int32 (expected float32, float16 or bfloat16)");
  x.tensor.dtype = DLDataType{kDLFloat, 32, 1};

  auto bad_eps = f->call({y.t(), x.t(), nullptr, -1.0});
  ASSERT_FALSE(bad_eps);
  EXPECT_EQ(bad_eps.error().kind, "ValueError");

  // tvm-ffi's own argument checks come back the same way.
  auto missing = f->call({y.t(), x.t()});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, "TypeError") << missing.error().describe();
  auto wrong_type = f->call({y.t(), "x", nullptr, 1e-6});
  ASSERT_FALSE(wrong_type);
  EXPECT_EQ(wrong_type.error().kind, "TypeError") << wrong_type.error().describe();

  // After errors the function still works.
  x.data.assign(x.data.size(), 2.0f);
  auto ok = f->call({y.t(), x.t(), nullptr, 0.0});
  ASSERT_TRUE(ok) << ok.error().describe();
  EXPECT_EQ(ok.value().type, Value::kNone);
  EXPECT_FLOAT_EQ(y.data[0], 1.0f);
}

TEST_F(FfiRmsNorm, StringsOptionalsStridesAndFusedOutputs) {
  std::mt19937 rng(3);
  auto rounding = kernel_->function("rms_norm_rounding_cpu");
  ASSERT_TRUE(rounding);
  Buffer x({3, 128}), y({3, 128}), y2({3, 128});
  x.randomize(rng);
  std::string qwen3 = "qwen3";
  ASSERT_TRUE(rounding->call({y.t(), x.t(), nullptr, 1e-6, qwen3}));
  ASSERT_TRUE(rounding->call({y2.t(), x.t(), nullptr, 1e-6, "fused"}));
  EXPECT_LT(max_diff(y.data, rms_norm_ref(x.data, nullptr, 128, 1e-6)), 1e-5);  // fp32: one rounding either way
  auto bad = rounding->call({y.t(), x.t(), nullptr, 1e-6, "bf16"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "rms_norm: unknown rounding convention 'bf16' (expected fused, qwen3 or diffusers)");

  // A strided input: every second row of a [6, 128] buffer, given with explicit DLPack strides.
  Buffer big({6, 128});
  big.randomize(rng);
  int64_t shape[2] = {3, 128}, strides[2] = {256, 1};
  DLTensor view = big.tensor;
  view.shape = shape;
  view.strides = strides;
  auto plain = kernel_->function("rms_norm_cpu");
  ASSERT_TRUE(plain->call({y.t(), &view, nullptr, 1e-6}));
  std::vector<float> rows;
  for (int r = 0; r < 6; r += 2) rows.insert(rows.end(), big.data.begin() + r * 128, big.data.begin() + (r + 1) * 128);
  EXPECT_LT(max_diff(y.data, rms_norm_ref(rows, nullptr, 128, 1e-6)), 1e-5);

  // Fused residual add: out = rms_norm(x + r), residual_out = x + r.
  auto fused = kernel_->function_for("fused_add_rms_norm", kDLCPU);
  ASSERT_TRUE(fused);
  Buffer r({3, 128}), sum({3, 128});
  r.randomize(rng);
  ASSERT_TRUE(fused->call({y.t(), sum.t(), x.t(), r.t(), nullptr, 1e-6}));
  std::vector<float> want_sum(x.data.size());
  for (size_t i = 0; i < want_sum.size(); ++i) want_sum[i] = x.data[i] + r.data[i];
  EXPECT_EQ(sum.data, want_sum);
  EXPECT_LT(max_diff(y.data, rms_norm_ref(want_sum, nullptr, 128, 1e-6)), 1e-5);
}

TEST_F(FfiRmsNorm, LookupErrorsListTheExports) {
  auto none = kernel_->function("relu_cpu");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::EntryNotFound);
  EXPECT_NE(none.error().hint.find("rms_norm_cpu"), std::string::npos) << none.error().hint;
  auto gpu = kernel_->function_for("rms_norm", kDLCUDA);  // the cpu build has no rms_norm_cuda
  ASSERT_FALSE(gpu);
  EXPECT_NE(gpu.error().message.find("'rms_norm_cuda' or 'rms_norm'"), std::string::npos) << gpu.error().message;
  // The same function twice is the same object; lookups from many threads agree.
  std::vector<std::thread> threads;
  std::atomic<int> found{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] { found += kernel_->function("rms_norm_cpu").has_value(); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(found.load(), 8);
}

TEST_F(FfiRmsNorm, LoadingTwiceSharesTheModuleAndCallsFromThreads) {
  auto again = get_local_kernel(build_dir("rmsnorm"), "cpu");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->module_path(), kernel_->module_path());
  auto f = again->function("rms_norm_cpu");
  ASSERT_TRUE(f);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      Buffer x({16, 512}), y({16, 512});
      x.randomize(rng);
      for (int i = 0; i < 20; ++i) {
        // A stream on CPU tensors is not used (no CUDA device among the arguments).
        if (!f->call({y.t(), x.t(), nullptr, 1e-6}, {.stream = reinterpret_cast<void*>(0x1)})) return;
      }
      ok += max_diff(y.data, rms_norm_ref(x.data, nullptr, 512, 1e-6)) < 1e-5;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
}

}  // namespace
