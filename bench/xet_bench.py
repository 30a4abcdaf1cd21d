"""Xet transfers: khub beside huggingface_hub + hf_xet (the default install), in one run, on one local hub.

Starts `khub serve` (loopback, a throw-away write token) and measures, each `--reps` times on fresh
repos and caches, medians reported:
  download  a 256 MiB Xet file that hf_xet uploaded: `hf_hub_download` (timed inside Python, import
            excluded) against `khub download` (the whole process);
  upload    256 MiB of fresh random bytes: `HfApi.upload_file` (inside Python) against `khub push`
            of a build holding them (the whole process: checks, digests, Xet, commit), taking turns
            (who goes first alternates from one round to the next, in downloads too);
  re-push   a build whose 64 MiB file changed in 1 % of its bytes (four places): the bytes khub push
            sends (`bytes_uploaded`) as a share of the file; an unchanged re-push sends 0.
Each timed run starts after os.sync(): the inputs just written would otherwise still be going to
disk during it. Each upload also starts after a pause (--settle, 5 s): both sides' uploads are bound
by the server's synced writes, and this VM's disk throttles sustained writes (dd with fdatasync:
1.2-1.5 GB/s for the first GiB, then ~280 MB/s; ~1 GB/s again after 5 s idle), so an upload would
pay for the writes before it. Both sides write the same bytes before an upload: its 256 MiB (khub's
straight into the build folder it pushes). Downloads run without the pause: of the two, only khub
syncs what it writes, so a throttled disk can only slow khub there.
Writes bench/results/<machine>_xet_bench.json with its provenance (bench/record.py).

  .venv/bin/python bench/xet_bench.py [--reps 3]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import RESULTS, dump, machine_label, provenance
from warm_get_kernel import run, start_hub

ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20
VARIANT = "torch212-cxx11-cpu-x86_64-linux"

HF_UPLOAD = r"""
import json, sys, time
from huggingface_hub import HfApi
repo, path = sys.argv[1], sys.argv[2]
api = HfApi()
api.create_repo(repo)
start = time.perf_counter()
api.upload_file(path_or_fileobj=path, path_in_repo="data.bin", repo_id=repo)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""

HF_DOWNLOAD = r"""
import json, sys, time
from huggingface_hub import hf_hub_download
repo, cache = sys.argv[1], sys.argv[2]
start = time.perf_counter()
hf_hub_download(repo, "data.bin", cache_dir=cache)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


SETTLE_S = 5.0  # --settle


def settle(pause):
    os.sync()
    if pause:
        time.sleep(SETTLE_S)


def timed(cmd, env, pause=True):
    settle(pause)
    start = time.perf_counter()
    out = run(cmd, env)
    return time.perf_counter() - start, out


def python_seconds(script, args, env, pause=True):
    settle(pause)
    return json.loads(run([sys.executable, "-c", script, *map(str, args)], env).strip().splitlines()[-1])["seconds"]


def make_build(work: Path, name: str, payload: bytes) -> Path:
    """The bundled rmsnorm CPU build with `payload` as data.bin in its variant."""
    build = work / name / "build"
    shutil.copytree(ROOT / "kernels" / "rmsnorm" / "build" / VARIANT, build / VARIANT)
    (build / VARIANT / "data.bin").write_bytes(payload)
    return build


def push(khub, build, repo, env):
    run([khub, "hash", build], env)
    seconds, out = timed([khub, "push", build, "--repo", repo, "--version", "1", "--json", "-q"], env)
    return seconds, json.loads(out)


def main():
    global SETTLE_S
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build", help="khub's build folder")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--out", type=Path, default=RESULTS / f"{machine_label()}_xet_bench.json")
    parser.add_argument("--settle", type=float, default=SETTLE_S, help="seconds idle before each timed upload")
    args = parser.parse_args()
    SETTLE_S = args.settle
    khub = args.build / "bin" / "khub"
    if not khub.exists() or not (ROOT / "kernels" / "rmsnorm" / "build" / VARIANT).exists():
        sys.exit("error: build khub and the bundled kernels first (scripts/setup)")

    size = args.size_mib * MIB
    with tempfile.TemporaryDirectory(prefix="khub-xet-bench-") as tmp:
        work = Path(tmp)
        payload = work / "payload.bin"
        token = os.urandom(16).hex()
        server, endpoint = start_hub(khub, work, token)
        try:
            base = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "KERNELS_"))}
            base.update(HF_ENDPOINT=endpoint, HF_TOKEN=token, HF_HOME=str(work / "hf-home"))
            upload = {"hf_xet": [], "khub": []}
            download = {"hf_xet": [], "khub": []}
            for rep in range(args.reps):
                # Fresh bytes each round (nothing to deduplicate), the clients taking turns; who goes
                # first alternates, as the machine's state drifts over a run (page cache, disk).
                def hf_upload():
                    payload.write_bytes(os.urandom(size))
                    env = dict(base, HF_XET_CACHE=str(work / f"xet-cache-up-{rep}"))
                    upload["hf_xet"].append(python_seconds(HF_UPLOAD, [f"user/hf-up-{rep}", payload], env))

                def khub_push():
                    build = make_build(work, f"up-{rep}", os.urandom(size))
                    seconds, result = push(khub, build, f"user/khub-up-{rep}", base)
                    if result.get("transfer") != "xet":
                        sys.exit(f"error: khub push did not use Xet: {result}")
                    upload["khub"].append(seconds)
                    shutil.rmtree(work / f"up-{rep}")
                for turn in ((hf_upload, khub_push) if rep % 2 == 0 else (khub_push, hf_upload)):
                    turn()
            for rep in range(args.reps):
                env = dict(base, HF_XET_CACHE=str(work / f"xet-cache-down-{rep}"))

                def hf_download():
                    download["hf_xet"].append(
                        python_seconds(HF_DOWNLOAD, ["user/hf-up-0", work / f"hf-cache-{rep}"], env, pause=False))

                def khub_download():
                    seconds, _ = timed([khub, "download", "user/hf-up-0", "data.bin", "--repo-type", "model",
                                        "--cache-dir", work / f"khub-cache-{rep}", "-q"], base, pause=False)
                    download["khub"].append(seconds)
                for turn in ((hf_download, khub_download) if rep % 2 == 0 else (khub_download, hf_download)):
                    turn()
                for d in (f"hf-cache-{rep}", f"khub-cache-{rep}", f"xet-cache-down-{rep}"):
                    shutil.rmtree(work / d, ignore_errors=True)

            # Re-push: 64 MiB, 1 % of it changed in four places, then unchanged.
            data = bytearray(random.Random(64).randbytes(64 * MIB))
            build = make_build(work, "repush", bytes(data))
            push(khub, build, "user/khub-repush", base)
            span = len(data) // 400
            for place in range(1, 5):
                start = len(data) // 5 * place
                data[start:start + span] = bytes(b ^ 0x33 for b in data[start:start + span])
            (build / VARIANT / "data.bin").write_bytes(data)
            _, changed = push(khub, build, "user/khub-repush", base)
            _, unchanged = push(khub, build, "user/khub-repush", base)
        finally:
            server.terminate()
            server.wait()

    def summary(times):
        median = statistics.median(times)
        return {"seconds": times, "median_s": median, "mib_per_s": size / MIB / median}

    from importlib.metadata import version
    result = {
        "provenance": provenance(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "huggingface_hub": version("huggingface_hub"),
        "hf_xet": version("hf-xet"),
        "size_mib": args.size_mib,
        "settle_s": args.settle,
        "download": {side: summary(t) for side, t in download.items()},
        "upload": {side: summary(t) for side, t in upload.items()},
        "repush": {"file_bytes": len(data), "changed_bytes": 4 * span,
                   "bytes_uploaded": changed["bytes_uploaded"], "bytes_deduplicated": changed.get("bytes_deduplicated"),
                   "share_sent": changed["bytes_uploaded"] / len(data),
                   "unchanged_bytes_uploaded": unchanged.get("bytes_uploaded", 0)},
    }
    for kind in ("download", "upload"):
        result[kind]["ratio"] = result[kind]["khub"]["mib_per_s"] / result[kind]["hf_xet"]["mib_per_s"]
    dump(result, args.out)
    for kind in ("download", "upload"):
        r = result[kind]
        print(f"{kind} {args.size_mib} MiB: hf_xet {r['hf_xet']['mib_per_s']:.0f} MiB/s, "
              f"khub {r['khub']['mib_per_s']:.0f} MiB/s, khub/hf_xet {r['ratio']:.2f}x")
    rp = result["repush"]
    print(f"re-push of 64 MiB with 1 % changed: {rp['bytes_uploaded']} bytes sent ({rp['share_sent']:.1%}); "
          f"unchanged: {rp['unchanged_bytes_uploaded']} bytes")


if __name__ == "__main__":
    main()
