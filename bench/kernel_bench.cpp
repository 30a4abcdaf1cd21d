// Warm get_kernel with torch: first load of a local build, then repeated get_kernel of a cached,
// verified, already loaded kernel — online against a loopback Hub (memoised lookups, one tree
// listing), offline (zero HTTP), and the torch-free part alone (fetch_kernel offline).
// Run: build/bench/kernel_bench --benchmark_format=json
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "fixture_hub.h"
#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/kernel.h"
#include "test_kernel_build.h"
#include "test_util.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;

struct World {
  test::FixtureHub hub;
  test::TempDir dir;
  GetKernelOptions options;
  World() {
    hub.commit("org/rmsnorm", "v1", test::test_kernel_files("_khub_test_cpu_aaaaaaa", "a"));
    hub.set_trusted("org", true);
    for (const auto& [p, f] : test::test_kernel_files("_khub_test_cpu_bbbbbbb", "b"))
      (void)write_file_atomic(dir.path() / "local" / p, f.content);
    options.version = 1;
    options.endpoint = hub.endpoint();
    options.cache_dir = dir.path() / "cache";
  }
};

World& world() {
  static World w;
  return w;
}

void BM_FirstLoadLocal(benchmark::State& state) {
  for (auto _ : state) {
    auto k = get_local_kernel(world().dir.path() / "local");
    if (!k) state.SkipWithError(k.error().message.c_str());
  }
}
BENCHMARK(BM_FirstLoadLocal)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_LocalAlreadyLoaded(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(get_local_kernel(world().dir.path() / "local"));
}
BENCHMARK(BM_LocalAlreadyLoaded)->Unit(benchmark::kMillisecond);

void BM_FirstGetKernelFromHub(benchmark::State& state) {
  for (auto _ : state) {
    auto k = get_kernel("org/rmsnorm", world().options);
    if (!k) state.SkipWithError(k.error().message.c_str());
  }
}
BENCHMARK(BM_FirstGetKernelFromHub)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_WarmGetKernelOnline(benchmark::State& state) {
  world().hub.clear_requests();
  for (auto _ : state) {
    auto k = get_kernel("org/rmsnorm", world().options);
    if (!k) state.SkipWithError(k.error().message.c_str());
  }
  state.counters["http_requests"] = static_cast<double>(world().hub.requests().size());
}
BENCHMARK(BM_WarmGetKernelOnline)->Unit(benchmark::kMillisecond);

void BM_WarmGetKernelOffline(benchmark::State& state) {
  setenv("HF_HUB_OFFLINE", "1", 1);
  for (auto _ : state) {
    auto k = get_kernel("org/rmsnorm", world().options);
    if (!k) state.SkipWithError(k.error().message.c_str());
  }
  unsetenv("HF_HUB_OFFLINE");
}
BENCHMARK(BM_WarmGetKernelOffline)->Unit(benchmark::kMillisecond);

void BM_VerifiedFetchOffline(benchmark::State& state) {
  hub::ClientOptions o;
  o.cache_dir = world().options.cache_dir;
  o.offline = true;
  hub::HubClient client(o);
  hub::KernelRequest r;
  r.repo_id = "org/rmsnorm";
  r.version = 1;
  r.trust_remote_code = true;
  for (auto _ : state) {
    auto k = hub::fetch_kernel(client, current_host(), r);
    if (!k || !k->verified) state.SkipWithError("not verified");
  }
}
BENCHMARK(BM_VerifiedFetchOffline)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
