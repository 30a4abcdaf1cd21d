"""CPU timings of the bundled kernels' cpu variants against the eager PyTorch formulas (bf16, wall
clock, median of N calls after two warm-ups, torch's default thread count). Run from the repo root
after a build: python3 bench/kernels/cpu_bench.py [--out F]; by default it writes
bench/results/cpu_<n>core_cpu_bench.json with its provenance (commit, date, machine; bench/record.py).
"""
import argparse
import glob
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from record import RESULTS, dump, machine_label, provenance  # noqa: E402

BF16 = torch.bfloat16


def load_ops():
    ops = {}
    for name in ["rmsnorm", "geglu", "adaln", "rope3d"]:
        variant = sorted(glob.glob(f"kernels/{name}/build/*-cpu-*"))[0]
        meta = json.load(open(os.path.join(variant, "metadata.json")))
        torch.ops.load_library(os.path.join(variant, meta["id"] + ".abi3.so"))
        ops[name] = getattr(torch.ops, meta["id"])
    return ops


def median_ms(fn, reps):
    fn()
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2] * 1e3


def cases(ops):
    # Large rows, then rows that fit in cache (Qwen3's hidden norm at 128 tokens, its q/k heads,
    # a decode batch), where the op is compute-bound.
    for rows, n in [(4096, 4096), (128, 4096), (8192, 128), (64, 4096)]:
        x = torch.randn(rows, n, dtype=BF16)
        w = torch.randn(n, dtype=BF16) * 0.1 + 1
        yield ("rms_norm", [rows, n], lambda x=x, w=w: ops["rmsnorm"].rms_norm(x, w, 1e-6),
               lambda x=x, w=w, n=n: F.rms_norm(x, (n,), w, 1e-6))
    g = torch.randn(2, 1024, 8192, dtype=BF16)
    yield ("geglu", [2, 1024, 8192], lambda: ops["geglu"].geglu(g, False),
           lambda: (lambda h, gate: h * F.gelu(gate))(*g.chunk(2, -1)))
    b, s, d = 2, 2688, 2048
    xa = torch.randn(b, s, d, dtype=BF16)
    table = torch.randn(6, d, dtype=BF16) * 0.1
    temb = torch.randn(b, 1, 6 * d, dtype=BF16) * 0.1

    def adaln_eager():
        ada = table[None, None] + temb.reshape(b, 1, 6, d)
        normed = (xa * torch.rsqrt(xa.float().pow(2).mean(-1, keepdim=True) + 1e-6)).to(BF16)
        return normed * (1 + ada[:, :, 1]) + ada[:, :, 0]
    yield ("adaln_rms_table", [b, s, d], lambda: ops["adaln"].adaln_rms_table(xa, table, temb, 0, 1e-6), adaln_eager)
    q, k = torch.randn(b, s, d, dtype=BF16), torch.randn(b, s, d, dtype=BF16)
    angle = torch.randn(b, s, d)
    cos, sin = angle.cos(), angle.sin()

    def rope(t):
        real, imag = t.unflatten(2, (-1, 2)).unbind(-1)
        rotated = torch.stack([-imag, real], dim=-1).flatten(2)
        return (t.float() * cos + rotated.float() * sin).to(BF16)
    yield ("apply_rotary_emb_qk", [b, s, d, "x2"], lambda: ops["rope3d"].apply_rotary_emb_qk(q, k, cos, sin),
           lambda: (rope(q), rope(k)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(RESULTS / f"{machine_label()}_cpu_bench.json"))
    ap.add_argument("--reps", type=int, default=15)
    a = ap.parse_args()
    ops = load_ops()
    rows = []
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for op, shape, khub, eager in cases(ops):
        k, e = median_ms(khub, a.reps), median_ms(eager, a.reps)
        rows.append({"op": op, "shape": shape, "khub_ms": k, "eager_ms": e})
        print(f"{op:22s} {str(shape):22s} khub {k:8.2f} ms  eager {e:8.2f} ms  {e / k:5.2f}x")
    dump({"provenance": provenance(), "torch": torch.__version__, "threads": torch.get_num_threads(),
          "results": rows}, a.out)


if __name__ == "__main__":
    main()
