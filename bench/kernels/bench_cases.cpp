// The benchmark suite: bf16 shapes of LTX-Video, Qwen3 and SD, and the fp16 / fp32
// subset (one or two shapes of each op).
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <dlfcn.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "bench_support.h"
#include "host_launch.h"

namespace khub_bench {
namespace {

using OptT = std::optional<at::Tensor>;
using Pair = std::tuple<at::Tensor, at::Tensor>;

const std::map<std::string, std::string> kDirs = {{"rmsnorm", KHUB_VARIANT_RMSNORM},
                                                  {"rope3d", KHUB_VARIANT_ROPE3D},
                                                  {"geglu", KHUB_VARIANT_GEGLU},
                                                  {"adaln", KHUB_VARIANT_ADALN}};

template <typename Sig>
c10::TypedOperatorHandle<Sig> op(const std::string& kernel, const char* name) {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow((variant_id(kernel) + "::" + name).c_str(), "")
      .typed<Sig>();
}

using at::ScalarType;

at::TensorOptions on_gpu(ScalarType dt) { return at::TensorOptions().dtype(dt).device(at::kCUDA); }
at::TensorOptions f32() { return on_gpu(at::kFloat); }
double esize(ScalarType dt) { return static_cast<double>(c10::elementSize(dt)); }

std::string dtype_name(ScalarType dt) {
  switch (dt) {
    case at::kBFloat16: return "bfloat16";
    case at::kHalf: return "float16";
    default: return "float32";
  }
}

std::string str(std::vector<int64_t> s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + "]";
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

Case rms(std::vector<int64_t> shape, ScalarType dt = at::kBFloat16) {
  const double bytes = esize(dt) * (2 * numel(shape) + shape.back());
  return {"rms_norm", str(shape), dtype_name(dt), bytes, [=] {
            auto x = at::randn(shape, on_gpu(dt));
            auto w = at::randn({shape.back()}, on_gpu(dt)) * 0.1 + 1;
            auto f = op<at::Tensor(const at::Tensor&, const OptT&, double)>("rmsnorm", "rms_norm");
            return std::function<at::Tensor()>([=] { return f.call(x, w, 1e-6); });
          }};
}

Case fused_add(std::vector<int64_t> shape, ScalarType dt = at::kBFloat16) {
  const double bytes = esize(dt) * (4 * numel(shape) + shape.back());
  return {"fused_add_rms_norm", str(shape), dtype_name(dt), bytes, [=] {
            auto x = at::randn(shape, on_gpu(dt)), r = at::randn(shape, on_gpu(dt));
            auto w = at::randn({shape.back()}, on_gpu(dt)) * 0.1 + 1;
            auto f = op<Pair(const at::Tensor&, const at::Tensor&, const OptT&, double)>("rmsnorm",
                                                                                        "fused_add_rms_norm");
            return std::function<at::Tensor()>([=] { return std::get<0>(f.call(x, r, w, 1e-6)); });
          }};
}

// LTX tables for a latent grid with S = fr * h * w tokens.
struct Tables {
  at::Tensor cos, sin, index;
};
Tables ltx_tables(int64_t fr, int64_t h, int64_t w, int64_t dim) {
  auto pos = at::cat({at::arange(fr, f32()) * (8.0 / 25.0) / 20.0, at::arange(h, f32()) / 64.0,
                      at::arange(w, f32()) / 64.0});
  auto [c, s] = op<Pair(const at::Tensor&, int64_t, double)>("rope3d", "ltx_rope_tables").call(pos, dim, 10000.0);
  const auto g = at::meshgrid({at::arange(fr), at::arange(h) + fr, at::arange(w) + fr + h}, "ij");
  auto index = at::stack({g[0], g[1], g[2]}, -1).reshape({1, fr * h * w, 3}).to(at::kInt).to(at::kCUDA);
  return {c, s, index};
}

Case rope_table(int64_t b, int64_t fr, int64_t h, int64_t w, bool norm, ScalarType dt = at::kBFloat16) {
  const int64_t s = fr * h * w, d = 2048;
  const double bytes = esize(dt) * 2 * 2 * b * s * d;  // q, k read and written
  return {norm ? "rms_norm_rope_table_qk" : "apply_rotary_emb_table_qk", str({b, s, d}) + "x2", dtype_name(dt), bytes,
          [=] {
            auto q = at::randn({b, s, d}, on_gpu(dt)), k = at::randn({b, s, d}, on_gpu(dt));
            auto wq = at::randn({d}, on_gpu(dt)) * 0.1 + 1, wk = at::randn({d}, on_gpu(dt)) * 0.1 + 1;
            const Tables t = ltx_tables(fr, h, w, d);
            if (norm) {
              auto f = op<Pair(const at::Tensor&, const at::Tensor&, const OptT&, const OptT&, double,
                               const at::Tensor&, const at::Tensor&, const at::Tensor&)>("rope3d",
                                                                                        "rms_norm_rope_table_qk");
              return std::function<at::Tensor()>(
                  [=] { return std::get<0>(f.call(q, k, wq, wk, 1e-5, t.cos, t.sin, t.index)); });
            }
            auto f = op<Pair(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                             const at::Tensor&)>("rope3d", "apply_rotary_emb_table_qk");
            return std::function<at::Tensor()>([=] { return std::get<0>(f.call(q, k, t.cos, t.sin, t.index)); });
          }};
}

Case rope_api(int64_t b, int64_t s) {
  const int64_t d = 2048;
  const double bytes = 2.0 * 2 * 2 * b * s * d + 2.0 * 4 * b * s * d;  // + fp32 cos, sin read once
  return {"apply_rotary_emb_qk", str({b, s, d}) + "x2", "bfloat16", bytes, [=] {
            auto q = at::randn({b, s, d}, on_gpu(at::kBFloat16)), k = at::randn({b, s, d}, on_gpu(at::kBFloat16));
            auto ang = at::randn({b, s, d}, f32());
            auto c = at::cos(ang), sn = at::sin(ang);
            auto f = op<Pair(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&)>(
                "rope3d", "apply_rotary_emb_qk");
            return std::function<at::Tensor()>([=] { return std::get<0>(f.call(q, k, c, sn)); });
          }};
}

Case adaln(int64_t b, int64_t s, int64_t d, ScalarType dt = at::kBFloat16) {
  const double bytes = esize(dt) * 2 * b * s * d;  // x read, y written; table / temb not counted
  return {"adaln_rms_table", str({b, s, d}), dtype_name(dt), bytes, [=] {
            auto x = at::randn({b, s, d}, on_gpu(dt));
            auto table = at::randn({6, d}, on_gpu(dt)) * 0.1, temb = at::randn({b, 1, 6 * d}, on_gpu(dt)) * 0.1;
            auto f = op<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t, double)>(
                "adaln", "adaln_rms_table");
            return std::function<at::Tensor()>([=] { return f.call(x, table, temb, 0, 1e-6); });
          }};
}

Case geglu(int64_t b, int64_t s, int64_t h, ScalarType dt = at::kBFloat16) {
  const double bytes = esize(dt) * (b * s * 2 * h + b * s * h);
  return {"geglu", str({b, s, 2 * h}), dtype_name(dt), bytes, [=] {
            auto x = at::randn({b, s, 2 * h}, on_gpu(dt));
            auto f = op<at::Tensor(const at::Tensor&, bool)>("geglu", "geglu");
            return std::function<at::Tensor()>([=] { return f.call(x, false); });
          }};
}

Case gelu_tanh(int64_t b, int64_t s, int64_t n, ScalarType dt = at::kBFloat16) {
  return {"gelu_tanh", str({b, s, n}), dtype_name(dt), esize(dt) * 2 * b * s * n, [=] {
            auto x = at::randn({b, s, n}, on_gpu(dt));
            auto f = op<at::Tensor(const at::Tensor&)>("geglu", "gelu_tanh");
            return std::function<at::Tensor()>([=] { return f.call(x); });
          }};
}

}  // namespace

const std::string& variant_id(const std::string& kernel) {
  static std::map<std::string, std::string> ids;
  auto it = ids.find(kernel);
  if (it != ids.end()) return it->second;
  const std::string dir = kDirs.at(kernel);
  std::ifstream in(dir + "/metadata.json");
  const std::string id = nlohmann::json::parse(in).at("id");
  if (!dlopen((dir + "/" + id + ".abi3.so").c_str(), RTLD_NOW | RTLD_LOCAL))
    throw std::runtime_error(std::string("dlopen: ") + dlerror());
  return ids.emplace(kernel, id).first->second;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases = {rms({2, 2688, 2048}), rms({2, 8064, 2048}), rms({4, 4096, 3072}), rms({1, 8192, 4096}),
          rms({1, 2048, 4096}), rms({1, 128, 4096}), rms({64, 1, 4096}), rms({1, 1, 4096}), rms({2, 128, 2048}),
          rms({1, 1024, 2048}), rms({2, 1024, 2048}), rms({4, 1024, 2048}), rms({1, 4096, 2048}),
          rms({2, 4096, 3072}), rms({1, 8192, 2048}), rms({2, 2310, 2048}), rms({2, 7392, 2048}),
          rms({1, 512, 4096}), rms({1, 1024, 4096}), rms({1, 4096, 4096}), rms({4, 512, 4096}), rms({8, 256, 4096}),
          rms({1, 2048, 32, 128}), rms({1, 2048, 8, 128}), rms({1, 8192, 32, 128}), fused_add({2, 2688, 2048}),
          fused_add({1, 2048, 4096}), fused_add({1, 8192, 4096}), fused_add({64, 1, 4096}), fused_add({1, 1024, 2048}),
          fused_add({2, 128, 2048}),
          rope_table(2, 7, 16, 24, false), rope_table(2, 7, 16, 24, true), rope_table(2, 21, 16, 24, false),
          rope_api(2, 2688), rope_api(2, 8064), adaln(2, 2688, 2048), adaln(2, 8064, 2048), geglu(2, 1024, 2048),
          geglu(2, 4096, 1280), geglu(2, 1024, 5120), geglu(2, 2688, 8192), gelu_tanh(2, 2688, 8192)};
  // The fp16 / fp32 subset: the LTX and Qwen3 shapes of each op (baselines.py runs the same).
  for (ScalarType dt : {at::kHalf, at::kFloat}) {
    for (Case c : {rms({2, 2688, 2048}, dt), rms({4, 4096, 3072}, dt), rms({1, 8192, 32, 128}, dt),
                   fused_add({2, 2688, 2048}, dt), rope_table(2, 7, 16, 24, false, dt), rope_table(2, 7, 16, 24, true, dt),
                   adaln(2, 2688, 2048, dt), geglu(2, 2688, 8192, dt), gelu_tanh(2, 2688, 8192, dt)})
      cases.push_back(std::move(c));
  }
  return cases;
}

namespace {

// An empty kernel on x's device and current stream, as the ops launch theirs.
void launch_empty_on(EmptyLaunch how, const at::Tensor& x) {
  const c10::cuda::CUDAGuard guard(x.device());
  const cudaError_t err = launch_empty(how, c10::cuda::getCurrentCUDAStream(x.device().index()).stream());
  TORCH_CHECK(err == cudaSuccess, "empty kernel launch: ", cudaGetErrorString(err));
}

}  // namespace

std::vector<std::pair<std::string, std::function<void()>>> host_pieces() {
  const std::vector<int64_t> shape{1, 128, 4096};
  const auto x = at::randn(shape, on_gpu(at::kBFloat16)), w = at::randn({4096}, on_gpu(at::kBFloat16));
  const auto none = at::empty({0, 4096}, on_gpu(at::kBFloat16));
  auto f = op<at::Tensor(const at::Tensor&, const OptT&, double)>("rmsnorm", "rms_norm");
  return {{"rms_norm [1,128,4096] (the whole call)", [=] { f.call(x, w, 1e-6); }},
          {"rms_norm [0,4096] (no allocation, no launch)", [=] { f.call(none, w, 1e-6); }},
          {"at::empty [1,128,4096] bf16 (the output)", [=] { at::empty(shape, on_gpu(at::kBFloat16)); }},
          {"at::cuda::sleep(0) (a plain kernel launch)", [] { at::cuda::sleep(0); }},
          {"empty kernel <<<>>> + cudaGetLastError", [=] { launch_empty_on(EmptyLaunch::Chevron, x); }},
          {"empty kernel cudaLaunchKernelEx", [=] { launch_empty_on(EmptyLaunch::LaunchEx, x); }},
          {"empty kernel cudaLaunchKernelEx + PDL attribute", [=] { launch_empty_on(EmptyLaunch::LaunchExPdl, x); }},
          {"CUDAGuard + getCurrentCUDAStream", [=] {
             const c10::cuda::CUDAGuard guard(x.device());
             (void)c10::cuda::getCurrentCUDAStream(x.device().index()).stream();
           }}};
}

}  // namespace khub_bench
