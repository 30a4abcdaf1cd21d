// Warm get_kernel with torch: first load of a local build, then repeated get_kernel of a cached,
// verified, already loaded kernel — online against a loopback Hub (memoised lookups, one tree
// listing), offline (zero HTTP), and the torch-free part alone (fetch_kernel offline, re-hashing
// every byte or, as get_kernel does, only files changed since this process hashed them).
// With KHUB_BENCH_REPO=org/name also the same two warm calls on that repo at version 1, from the
// Hub and cache the environment names (HF_ENDPOINT, KERNELS_CACHE): bench/warm_get_kernel.py runs
// them beside the Python client's get_kernel.
// Run: build/bench/kernel_bench --benchmark_format=json
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "fixture_hub.h"
#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/kernel.h"
#include "test_kernel_build.h"
#include "test_util.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;

// Files written in the last 2 s are hashed again on every call (HashReuse::Unchanged); the warm
// cases time the steady state, so they start after the files are that old.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(2100)); }

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
    settle();
  }
};

World& world() {
  static World w;
  return w;
}

void BM_FirstLoadLocal(benchmark::State& state) {
  world();  // set-up outside the timing
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
  settle();  // the download just written
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
  r.options.version = 1;
  r.options.trust_remote_code = true;
  r.reuse_hashes = state.range(0) == 1 ? HashReuse::Unchanged : HashReuse::Never;
  for (auto _ : state) {
    auto k = hub::fetch_kernel(client, current_host(), r);
    if (!k || !k->verified) state.SkipWithError("not verified");
  }
}
// Argument 0: every byte hashed again (what `khub verify` does); 1: as get_kernel, unchanged files not re-read.
BENCHMARK(BM_VerifiedFetchOffline)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// get_kernel(repo, {.version = 1}) from the environment's Hub and cache; `offline` sets HF_HUB_OFFLINE.
void warm_get_kernel_repo(benchmark::State& state, const std::string& repo, bool offline) {
  if (offline) setenv("HF_HUB_OFFLINE", "1", 1);
  GetKernelOptions options;
  options.version = 1;
  if (auto first = get_kernel(repo, options); !first) state.SkipWithError(first.error().describe().c_str());
  settle();
  for (auto _ : state) {
    auto k = get_kernel(repo, options);
    if (!k) state.SkipWithError(k.error().message.c_str());
  }
  if (offline) unsetenv("HF_HUB_OFFLINE");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (const char* repo = std::getenv("KHUB_BENCH_REPO"); repo && *repo) {
    for (bool offline : {false, true})
      benchmark::RegisterBenchmark(offline ? "BM_WarmGetKernelRepoOffline" : "BM_WarmGetKernelRepoOnline",
                                   warm_get_kernel_repo, std::string(repo), offline)
          ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
