"""Warm get_kernel: khub (C++) beside the Python `kernels` client, in one run, on one local hub.

Starts `khub serve` with a throw-away write token, pushes the bundled rmsnorm build as
user/rmsnorm version 1, then times get_kernel("user/rmsnorm", version=1): the Python client
online in its own process, khub through build/bench/kernel_bench (KHUB_BENCH_REPO; online, then
HF_HUB_OFFLINE=1) on a fresh cache, and the Python client offline on the cache khub filled. Each
side's first call in its process is reported apart (download and import / dlopen); the medians
are of warm calls on a cached, already loaded kernel.
Writes one JSON file with both sides, the ratios (Python median / khub median) and its provenance
(commit, date, machine; bench/record.py), by default bench/results/cpu_<n>core_warm_get_kernel.json.

  .venv/bin/python bench/warm_get_kernel.py
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import RESULTS, dump, machine_label, provenance

ROOT = Path(__file__).resolve().parents[1]
REPO = "user/rmsnorm"

PYTHON_TIMER = r"""
import json, statistics, sys, time
from kernels import get_kernel
repo, calls = sys.argv[1], int(sys.argv[2])
start = time.perf_counter()
get_kernel(repo, version=1)
first = time.perf_counter() - start
times = []
for _ in range(calls):
    start = time.perf_counter()
    get_kernel(repo, version=1)
    times.append(time.perf_counter() - start)
print(json.dumps({"first_ms": first * 1e3, "median_ms": statistics.median(times) * 1e3, "calls": calls}))
"""


def start_hub(khub: Path, root: Path, token: str):
    log = open(root / "serve.log", "w+")
    server = subprocess.Popen([str(khub), "serve", "--root", str(root / "hub"), "--port", "0", "--trust", "user",
                               "--token", f"{token}:write", "-q"], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(200):
        log.seek(0)
        match = re.search(r"http://127\.0\.0\.1:\d+", log.read())
        if match:
            return server, match.group(0)
        if server.poll() is not None:
            break
        time.sleep(0.05)
    server.kill()
    log.seek(0)
    sys.exit(f"error: khub serve did not report its address:\n{log.read()}")


def run(cmd, env):
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def time_python(env, calls: int, offline: bool):
    env = dict(env, HF_HUB_OFFLINE="1" if offline else "0")
    return json.loads(run([sys.executable, "-c", PYTHON_TIMER, REPO, str(calls)], env).strip().splitlines()[-1])


def time_khub(kernel_bench: Path, env):
    out = run([str(kernel_bench), "--benchmark_filter=WarmGetKernelRepo", "--benchmark_repetitions=5",
               "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
              dict(env, KHUB_BENCH_REPO=REPO))
    result = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            mode = "offline" if "Offline" in b["name"] else "online"
            result[mode] = {"median_ms": b["real_time"], "iterations": b["iterations"]}
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build", help="khub's build folder")
    parser.add_argument("--calls", type=int, default=50, help="warm Python calls per mode")
    parser.add_argument("--out", type=Path, default=RESULTS / f"{machine_label()}_warm_get_kernel.json")
    args = parser.parse_args()
    khub, kernel_bench = args.build / "bin" / "khub", args.build / "bench" / "kernel_bench"
    kernel_build = ROOT / "kernels" / "rmsnorm" / "build"
    for needed in (khub, kernel_bench, kernel_build):
        if not needed.exists():
            sys.exit(f"error: {needed} is missing; build khub with LibTorch first (scripts/setup)")

    with tempfile.TemporaryDirectory(prefix="khub-warm-") as tmp:
        work = Path(tmp)
        token = os.urandom(16).hex()
        server, endpoint = start_hub(khub, work, token)
        try:
            env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KERNELS_"))}
            # Telemetry stays on: kernels 0.17.2 builds an invalid User-Agent when it is disabled.
            env.update(HF_ENDPOINT=endpoint, HF_TOKEN=token, HF_HOME=str(work / "hf-home"),
                       KERNELS_CACHE=str(work / "cache"))
            run([khub, "push", kernel_build, "--repo", REPO, "--version", "1"], env)
            python = {"online": time_python(env, args.calls, offline=False)}
            # khub fills a second cache, which the Python client then reads offline: its own offline
            # get_kernel(version=1) needs refs/v1, which only khub writes, and snapshot_download refuses a
            # snapshot its own cached tree listing (trees/<commit>.json) shows without the other variants.
            env["KERNELS_CACHE"] = str(work / "cache-khub")
            khub_times = time_khub(kernel_bench, env)
            python["offline"] = time_python(env, args.calls, offline=True)
        finally:
            server.terminate()
            server.wait()

    import kernels
    import torch
    result = {
        "provenance": provenance(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "torch": torch.__version__,
        "kernels": getattr(kernels, "__version__", "unknown"),
        "repo": REPO,
        "python": python,
        "khub": khub_times,
        "ratio": {mode: python[mode]["median_ms"] / khub_times[mode]["median_ms"] for mode in ("online", "offline")},
    }
    dump(result, args.out)
    for mode in ("online", "offline"):
        print(f"{mode}: Python {python[mode]['median_ms']:.2f} ms, khub {khub_times[mode]['median_ms']:.2f} ms, "
              f"ratio {result['ratio'][mode]:.1f}x (first call: Python {python[mode]['first_ms']:.0f} ms)")


if __name__ == "__main__":
    main()
