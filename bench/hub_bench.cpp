// Hub client benchmarks without torch: hashing throughput (sha256, git blob sha1) and a cold
// 256 MB download from a loopback Hub (HEAD, CDN redirect, GET, streaming hash, fsync, rename).
// Run: build/bench/hub_bench --benchmark_format=json
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>

#include "fixture_hub.h"
#include "khub/base/hash.h"
#include "khub/hub/download.h"
#include "test_util.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;

std::string buffer(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 2654435761u) >> 24);
  return s;
}

void BM_Sha256(benchmark::State& state) {
  std::string data = buffer(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(sha256_hex(data));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Sha256)->Arg(64 << 20)->Unit(benchmark::kMillisecond);

void BM_GitBlobSha1(benchmark::State& state) {
  std::string data = buffer(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(git_blob_sha1_hex(data));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_GitBlobSha1)->Arg(64 << 20)->Unit(benchmark::kMillisecond);

// Cold: an empty cache each iteration; the whole fetch_file path is timed. Second argument: 0 = cache
// on the temp folder's disk (fdatasync is real), 1 = cache on /dev/shm (isolates network and hashing).
void BM_ColdDownload(benchmark::State& state) {
  const std::size_t size = static_cast<std::size_t>(state.range(0));
  test::FixtureHub hub;
  std::string commit = hub.commit("org/big", "v1", {{"build/v/blob.bin", {buffer(size), true}}});
  test::TempDir dir;
  fs::path root = state.range(1) == 1 && fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : dir.path();
  int i = 0;
  for (auto _ : state) {
    fs::path cache = root / ("khub-bench-" + std::to_string(::getpid()) + "-" + std::to_string(i++));
    hub::HubClient client(test::fixture_options(hub, cache));
    auto p = hub::fetch_file(client, hub::RepoRef{hub::RepoType::Kernel, "org/big"}, commit, "build/v/blob.bin");
    if (!p) state.SkipWithError(p.error().message.c_str());
    state.PauseTiming();
    fs::remove_all(cache);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_ColdDownload)
    ->Args({256 << 20, 0})
    ->Args({256 << 20, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
