"""Xet upload of a 256 MiB file: khub push beside huggingface_hub + hf_xet, in one run, on one local hub.

Starts `khub serve` (loopback) with a throw-away write token, writes 256 MiB of random bytes, then
times, each --runs times on a fresh repo and fresh bytes:
  hf:   HfApi().upload_file of the file to a new model repo (default huggingface_hub + hf_xet, Xet on),
        timed around the call in a Python process (imports and create_repo excluded);
  khub: `khub push` of a one-variant build folder holding the file as lib.bin (plus __init__.py and
        metadata.json, digest written by `khub hash` beforehand), timed around the process.
The two clients take turns (hf, khub, hf, khub, ...). Prints the medians and the throughput (MiB/s); with --out, writes them as JSON with provenance.

  .venv/bin/python bench/xet_upload_bench.py [--size-mib 256] [--runs 3]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import dump, provenance
from warm_get_kernel import start_hub

ROOT = Path(__file__).resolve().parents[1]
VARIANT = "torch212-cxx11-cu130-x86_64-linux"

HF_TIMER = r"""
import json, sys, time
from huggingface_hub import HfApi
first, paths = int(sys.argv[1]), sys.argv[2:]
api = HfApi()
times = []
for i, path in enumerate(paths, start=first):
    repo = f"user/hf-upload-{i}"
    api.create_repo(repo, repo_type="model")
    start = time.perf_counter()
    api.upload_file(path_or_fileobj=path, path_in_repo="data.bin", repo_id=repo, repo_type="model")
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def run(cmd, env):
    done = subprocess.run([str(c) for c in cmd], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


def make_build(kernel: Path, data: Path, module: Path):
    v = kernel / "build" / VARIANT
    v.mkdir(parents=True)
    (v / "__init__.py").write_text("from ._ops import ops\n")
    (v / "_ops.py").write_text("import torch\nops = torch.ops._relu_cuda_abc1234\n")
    (v / "metadata.json").write_text(
        '{"name":"relu","id":"_relu_cuda_abc1234","version":1,"license":"Apache-2.0",'
        '"python-depends":[],"backend":{"type":"cuda"}}')
    shutil.copy(module, v / "_relu_cuda_abc1234.abi3.so")  # the publish tests' clean module
    os.link(data, v / "lib.bin")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build", help="khub's build folder")
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=["hf", "khub"], help="time one client alone")
    parser.add_argument("--out", type=Path, help="write the result as JSON here")
    args = parser.parse_args()
    khub = args.build / "bin" / "khub"
    module = args.build / "tests" / "fixtures" / "khub_fixture_ns_good.abi3.so"
    for needed in (khub, module):
        if not needed.exists():
            sys.exit(f"error: {needed} is missing; build khub and its publish tests first")

    with tempfile.TemporaryDirectory(prefix="khub-xetup-") as tmp:
        work = Path(tmp)
        token = os.urandom(16).hex()
        # Fresh random bytes for every upload: neither client may dedup against an earlier run.
        datas = [work / f"data{i}.bin" for i in range(2 * args.runs)]
        for data in datas:
            with open(data, "wb") as f:
                for _ in range(args.size_mib):
                    f.write(os.urandom(1 << 20))
        kernels = []
        for i in range(args.runs):
            kernels.append(work / f"kernel{i}")
            make_build(kernels[-1], datas[args.runs + i], module)
        server, endpoint = start_hub(khub, work, token)
        try:
            env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KERNELS_"))}
            env.update(HF_ENDPOINT=endpoint, HF_TOKEN=token, HF_HOME=str(work / "hf-home"),
                       HF_HUB_DISABLE_PROGRESS_BARS="1")
            for k in kernels:
                run([khub, "hash", k / "build"], env)
            time.sleep(2.1)  # files older than 2 s: khub may reuse their hashes within one push
            # Interleaved, one upload of each client in turn: the server's writes of one upload are
            # still being flushed during the next, and neither client should always follow the other.
            hf, kh = [], []
            for i, k in enumerate(kernels):
                if args.only != "khub":
                    out = run([sys.executable, "-c", HF_TIMER, str(i), datas[i]], env).stdout
                    hf += json.loads(out.strip().splitlines()[-1])
                if args.only != "hf":
                    start = time.perf_counter()
                    run([khub, "push", k, "--repo", f"user/khub-upload-{i}", "--version", "1", "-q"], env)
                    kh.append(time.perf_counter() - start)
        finally:
            server.terminate()
            server.wait()

    mib = args.size_mib
    result = {"provenance": provenance(), "cpus": os.cpu_count(), "load_average": os.getloadavg(), "size_mib": mib}
    for name, times in (("hf_xet", hf), ("khub", kh)):
        if times:
            med = statistics.median(times)
            result[name] = {"times_s": times, "median_s": med, "mib_per_s": mib / med}
            print(f"{name}: median {med:.2f} s ({mib / med:.0f} MiB/s), runs {', '.join(f'{t:.2f}' for t in times)}")
    if args.out:
        dump(result, args.out)


if __name__ == "__main__":
    main()
