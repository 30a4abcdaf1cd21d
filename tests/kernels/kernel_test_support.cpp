#include "kernel_test_support.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

// Python C-API stub: the kernel modules reference PyModule_Create2 from their PyInit_<id>, which
// is never called here. The executable exports this definition so dlopen(RTLD_NOW) resolves it.
extern "C" __attribute__((visibility("default"))) void* PyModule_Create2(void*, int) { return nullptr; }

namespace khub_test {

at::Device test_device() {
#ifdef KHUB_KERNELS_TEST_CUDA
  return at::Device(at::kCUDA, 0);
#else
  return at::Device(at::kCPU);
#endif
}

bool on_cuda() { return test_device().is_cuda(); }

const std::string& load_variant(const std::string& dir) {
  static std::mutex mu;
  static std::map<std::string, std::string> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(dir);
  if (it != loaded.end()) return it->second;
  std::ifstream in(dir + "/metadata.json");
  if (!in) throw std::runtime_error(dir + "/metadata.json: cannot open (was khub_kernels built?)");
  const auto meta = nlohmann::json::parse(in);
  const std::string id = meta.at("id").get<std::string>();
  const std::string so = dir + "/" + id + ".abi3.so";
  if (!dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL)) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  return loaded.emplace(dir, id).first->second;
}

bool stable_abi() {
  static const bool stable = [] {
    const char* abi = std::getenv("KHUB_KERNELS_TEST_ABI");
    return abi != nullptr && std::string(abi) == "stable";
  }();
  return stable;
}

const std::string& kernel_id(const char* torch_dir, const char* stable_dir) {
  if (!stable_abi()) return load_variant(torch_dir);
  if (stable_dir == nullptr) throw std::runtime_error("KHUB_KERNELS_TEST_ABI=stable, but no stable-ABI build was configured");
  return load_variant(stable_dir);
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous: return "contiguous";
    case Layout::RowStrided: return "row-strided";
    case Layout::Misaligned: return "misaligned";
  }
  return "?";
}

at::Tensor make_input(at::IntArrayRef shape, at::ScalarType dtype, Layout layout, double scale, double mean) {
  auto opts = at::TensorOptions().dtype(at::kDouble).device(test_device());
  std::vector<int64_t> s(shape.begin(), shape.end());
  auto fill = [&](at::Tensor t) {
    auto v = at::randn(t.sizes(), opts) * scale + mean;
    // Never exactly zero: push tiny values away from 0.
    v = at::where(v.abs() < 1e-3, at::full_like(v, 1e-3), v);
    t.copy_(v);
    return t;
  };
  switch (layout) {
    case Layout::Contiguous: return fill(at::empty(s, opts.dtype(dtype)));
    case Layout::RowStrided: {
      auto padded = s;
      padded.back() += 24;
      auto base = at::empty(padded, opts.dtype(dtype)).fill_(std::nan(""));
      return fill(base.narrow(-1, 8, s.back()));
    }
    case Layout::Misaligned: {
      int64_t numel = 1;
      for (auto d : s) numel *= d;
      auto flat = at::empty({numel + 1}, opts.dtype(dtype));
      return fill(flat.narrow(0, 1, numel).view(s));
    }
  }
  return {};
}

void poison_next(at::IntArrayRef shape, at::ScalarType dtype) {
  auto t = at::full(shape, std::nan(""), at::TensorOptions().dtype(dtype).device(test_device()));
  (void)t;  // freed here; the caching allocator hands this block to the next equal-size allocation
}

void queue_behind_busy_gpu() {
  if (!on_cuda()) return;
  const auto m = at::ones({4096, 4096}, at::TensorOptions().dtype(at::kFloat).device(test_device()));
  (void)at::mm(m, m);  // freed on return; the stream still runs it before the next work
}

Tolerance tolerance(at::ScalarType dtype) {
  switch (dtype) {
    case at::kBFloat16: return {1.6e-2, 1e-5, 2.5e-3};
    case at::kHalf: return {2e-3, 1e-5, 6e-4};
    default: return {2e-5, 1e-5, 1e-5};  // atol as torch.testing.assert_close for fp32
  }
}

at::Tensor round_to(const at::Tensor& t, at::ScalarType dtype) { return t.to(dtype).to(at::kDouble); }

namespace {
std::map<std::string, double>& error_table() {
  static auto* t = new std::map<std::string, double>();  // outlives the printer below
  return *t;
}
struct ErrorPrinter {
  ~ErrorPrinter() {
    if (error_table().empty()) return;
    std::printf("\n[max abs error vs float64 reference]\n");
    for (const auto& [k, v] : error_table()) std::printf("  %-40s %.3e\n", k.c_str(), v);
  }
} printer;
}  // namespace

void record_error(const std::string& op, at::ScalarType dtype, double max_abs) {
  auto& e = error_table()[op + " " + c10::toString(dtype)];
  e = std::max(e, max_abs);
}

double expect_close(const at::Tensor& out, const at::Tensor& ref, at::ScalarType dtype, const std::string& what) {
  const Tolerance tol = tolerance(dtype);
  EXPECT_EQ(out.sizes(), ref.sizes()) << what;
  if (out.sizes() != ref.sizes()) return INFINITY;
  const auto o = out.to(at::kCPU).to(at::kDouble);
  const auto r = ref.to(at::kCPU).to(at::kDouble);
  EXPECT_FALSE(o.isnan().any().item<bool>()) << what << ": NaN in output (unwritten element?)";
  const auto err = (o - r).abs();
  const double max_abs = err.numel() ? err.max().item<double>() : 0.0;
  const auto bound = r.abs() * tol.rtol + tol.atol;
  const auto bad = (err > bound).sum().item<int64_t>();
  const double ref_norm = r.norm().item<double>();
  const double rel_l2 = ref_norm > 0 ? (o - r).norm().item<double>() / ref_norm : 0.0;
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << err.numel() << " elements outside rtol " << tol.rtol
                    << ", max abs error " << max_abs;
  // Relative L2 is a statistical bound: meaningful from a few hundred elements on.
  if (err.numel() >= 256) {
    EXPECT_LE(rel_l2, tol.rel_l2) << what << ": relative L2 error";
  }
  return max_abs;
}

void expect_cpu_parallel_rows_match_serial(const std::function<std::vector<at::Tensor>()>& call,
                                           const std::string& what) {
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const auto serial = call();
  at::set_num_threads(std::max(threads, 2));
  const auto expect_same = [&](const std::vector<at::Tensor>& got, const std::string& how) {
    ASSERT_EQ(got.size(), serial.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(at::equal(got[i], serial[i])) << what << ": output " << i << " differs " << how;
  };
  expect_same(call(), "with " + std::to_string(at::get_num_threads()) + " threads");
  const int tasks = 2 * at::get_num_interop_threads();
  std::vector<std::vector<at::Tensor>> results(tasks);
  std::vector<std::promise<void>> done(tasks);
  for (int t = 0; t < tasks; ++t) {
    at::launch([&, t] {
      results[t] = call();
      done[t].set_value();
    });
  }
  bool all_done = true;
  for (int t = 0; t < tasks; ++t)
    all_done = all_done && done[t].get_future().wait_for(std::chrono::seconds(120)) == std::future_status::ready;
  at::set_num_threads(threads);
  ASSERT_TRUE(all_done) << what << ": calls from inter-op pool tasks did not finish within 120 s";
  for (int t = 0; t < tasks; ++t) expect_same(results[t], "in pool task " + std::to_string(t));
}

}  // namespace khub_test
