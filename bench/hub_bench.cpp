// Hub client benchmarks without torch: hashing throughput (sha256, git blob sha1) and a cold
// 256 MB download from a loopback Hub (HEAD, CDN redirect, GET, streaming hash, fsync, rename),
// served by the test fixture (from memory) and, where the server is built, by khub serve's own
// server (from its blob store on disk).
// Run: build/bench/hub_bench --benchmark_format=json
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>

#include "fixture_hub.h"
#include "khub/base/hash.h"
#include "khub/hub/download.h"
#include "test_util.h"
#ifdef KHUB_BENCH_LOCALHUB
#include "khub/localhub/server.h"
#include "khub/localhub/store.h"
#endif

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
void time_cold_downloads(benchmark::State& state, const hub::ClientOptions& base, const hub::RepoRef& repo,
                         const std::string& revision, const std::string& path) {
  test::TempDir dir;
  fs::path root = state.range(1) == 1 && fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : dir.path();
  int i = 0;
  for (auto _ : state) {
    hub::ClientOptions options = base;
    options.cache_dir = root / ("khub-bench-" + std::to_string(::getpid()) + "-" + std::to_string(i++));
    hub::HubClient client(options);
    auto p = hub::fetch_file(client, repo, revision, path);
    if (!p) state.SkipWithError(p.error().message.c_str());
    state.PauseTiming();
    fs::remove_all(options.cache_dir);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

void BM_ColdDownload(benchmark::State& state) {
  test::FixtureHub hub;
  std::string commit =
      hub.commit("org/big", "v1", {{"build/v/blob.bin", {buffer(static_cast<std::size_t>(state.range(0))), true}}});
  time_cold_downloads(state, test::fixture_options(hub, {}), hub::RepoRef{hub::RepoType::Kernel, "org/big"}, commit,
                      "build/v/blob.bin");
}
BENCHMARK(BM_ColdDownload)
    ->Args({256 << 20, 0})
    ->Args({256 << 20, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

#ifdef KHUB_BENCH_LOCALHUB
// The blob committed straight into a store, then served by localhub::Server (what `khub serve` runs):
// the resolve answers a 302 to the server's own LFS path, whose body is read from the blob file.
void BM_ColdDownloadLocalHub(benchmark::State& state) {
  test::TempDir dir;
  const localhub::RepoKey key{localhub::RepoType::Kernel, "org", "big"};
  {
    auto store = localhub::RepoStore::open(dir.path() / "store");
    if (!store) return state.SkipWithError(store.error().message.c_str());
    auto blob = (*store)->blobs().put(buffer(static_cast<std::size_t>(state.range(0))));
    auto repo = (*store)->create_repo(key, false);
    if (!blob || !repo) return state.SkipWithError("could not fill the store");
    localhub::CommitRequest request{.summary = "blob", .ops = {{.path = "build/v/blob.bin", .sha256 = blob->sha256,
                                                                .size = blob->size, .lfs = true}}};
    if (auto c = (*store)->commit(*repo, "main", request); !c) return state.SkipWithError(c.error().message.c_str());
  }
  localhub::Server server({.root = dir.path() / "store"});
  if (auto st = server.start(); !st) return state.SkipWithError(st.error().message.c_str());
  hub::ClientOptions options;
  options.endpoint = server.url();
  options.telemetry = false;
  time_cold_downloads(state, options, hub::RepoRef{hub::RepoType::Kernel, "org/big"}, "main", "build/v/blob.bin");
}
BENCHMARK(BM_ColdDownloadLocalHub)
    ->Args({256 << 20, 0})
    ->Args({256 << 20, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();
#endif

}  // namespace

BENCHMARK_MAIN();
