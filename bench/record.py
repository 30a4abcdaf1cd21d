"""Provenance for benchmark results: every file in bench/results/ carries a top-level "provenance"
object {commit, date, machine} saying what was measured, when and where.

bench/results/ keeps one current file per harness and machine, named <machine>_<harness>.json
(h200_kernels.json, cpu_2core_hub_bench.json, ...); a new run replaces the file, and git keeps the
history. The harness scripts import provenance() / dump() from here; the C++ harnesses go through
the command line:

  # stamp a file a harness wrote (e.g. kernels_bench's JSON back from the H200 machine)
  python3 bench/record.py stamp FILE [--commit SHA] [--machine TEXT]
  # run a command that prints JSON (Google Benchmark), stamp it, write it to OUT
  python3 bench/record.py run bench/results/cpu_2core_hub_bench.json -- \\
      build/bench/hub_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \\
      --benchmark_format=json

The commit is --commit, else $KHUB_COMMIT, else `git rev-parse --short HEAD` (with "-dirty" when
tracked files differ). On the device machine the copy of the tree keeps an old HEAD, so pass the
commit there. Standard library only.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def _git(*args):
    try:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def source_commit(commit=None):
    """--commit, $KHUB_COMMIT, or the checkout's short HEAD (+ "-dirty"); "unknown" without git."""
    if commit:
        return commit
    if os.environ.get("KHUB_COMMIT"):
        return os.environ["KHUB_COMMIT"]
    head = _git("rev-parse", "--short", "HEAD")
    if not head:
        return "unknown"
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return head + ("-dirty" if dirty else "")


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_label(gpu=None):
    """Short machine name used in result file names: "h200" for an NVIDIA H200, else cpu_<n>core."""
    if gpu:
        return gpu.replace("NVIDIA", "").strip().lower().replace(" ", "_")
    return f"cpu_{os.cpu_count()}core"


def machine_text(gpu=None):
    """One line describing the machine."""
    cpus = f"{os.cpu_count()} CPUs ({cpu_model()})"
    return f"{gpu}, {cpus}" if gpu else cpus


def provenance(commit=None, machine=None, gpu=None, **extra):
    doc = {"commit": source_commit(commit), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "machine": machine or machine_text(gpu)}
    doc.update(extra)
    return doc


def dump(doc, path):
    """Writes doc as JSON with "provenance" first and one list element (a result row) per line, so a
    diff between two runs reads row by row."""
    doc = {"provenance": doc["provenance"], **{k: v for k, v in doc.items() if k != "provenance"}}
    out = ["{"]
    items = list(doc.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i + 1 < len(items) else ""
        if isinstance(value, list) and value and all(isinstance(v, (dict, list)) for v in value):
            rows = ",\n".join("  " + json.dumps(v, ensure_ascii=False) for v in value)
            out.append(f" {json.dumps(key)}: [\n{rows}\n ]{comma}")
        else:
            out.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    out.append("}")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description="stamp benchmark results with commit, date and machine")
    sub = ap.add_subparsers(dest="cmd", required=True)
    stamp = sub.add_parser("stamp", help="add provenance to a JSON file in place")
    stamp.add_argument("file")
    run = sub.add_parser("run", help="run a command printing JSON; write it with provenance to OUT")
    run.add_argument("out")
    run.add_argument("command", nargs=argparse.REMAINDER)
    for p in (stamp, run):
        p.add_argument("--commit")
        p.add_argument("--machine", help="machine description (default: CPU count and model, or the GPU's name)")
    a = ap.parse_args()
    if a.cmd == "stamp":
        doc = json.loads(Path(a.file).read_text())
        gpu = doc.get("gpu") if isinstance(doc.get("gpu"), str) else None
        doc["provenance"] = provenance(a.commit, a.machine, gpu)
        dump(doc, a.file)
        return
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        sys.exit("record.py run: no command given")
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"record.py run: {' '.join(command)} exited {done.returncode}")
    doc = json.loads(done.stdout)
    doc["provenance"] = provenance(a.commit, a.machine)
    dump(doc, a.out)


if __name__ == "__main__":
    main()
