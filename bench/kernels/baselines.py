"""PyTorch baselines for the kernels benchmark, same method as kernels_bench (docs/benchmarks.md):
eager model formulas, F.rms_norm and torch.compile(dynamic=False), cold (rotated buffers, sleep gap,
CUDA events) and warm (CUDA graph of 20 calls). Also checks khub's cuda variants against eager
before timing (loaded with torch.ops.load_library) and times them here too, as the baseline named
"khub (same process)": kernels_bench runs in another process, and where khub and torch.compile are
within 1-2 % only one process, one machine state, decides which is faster. Writes JSON with its
provenance (commit, date, machine; bench/record.py), by default bench/results/<machine>_baselines.json.

usage: baselines.py [--out F] --variants kernels/ [--commit SHA] [--no-compile]
"""
import argparse
import glob
import json
import math
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from record import RESULTS, dump, machine_label, provenance, source_commit  # noqa: E402

L2 = torch.cuda.get_device_properties(0).L2_cache_size
BF16 = torch.bfloat16
KHUB = "khub (same process)"  # the baseline name of khub's own ops timed here
DTYPE_NAMES = {torch.bfloat16: "bfloat16", torch.float16: "float16", torch.float32: "float32"}


def esize(dt):
    return torch.empty((), dtype=dt).element_size()


def stats(v):
    v = sorted(v)
    at = lambda q: v[int(q * (len(v) - 1) + 0.5)]
    return at(0.5), at(0.1), at(0.9)


# GPU idle gap ahead of each cold call: ~130 us at the H200's 1.98 GHz, longer than any baseline's
# host-side call (torch.compile's Python wrapper took 30-70 us), so the events time the GPU work and
# not the host's launch. 60000 cycles (~30 us) let torch.compile's cold numbers read host-bound in
# some runs (q_norm 35.7 in one run, 71.8 in the next).
GAP_CYCLES = 240000


def time_events(reps, gap, body):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for i, (a, b) in enumerate(ev):
        if gap:
            torch.cuda._sleep(GAP_CYCLES)
        a.record()
        body(i)
        b.record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1e3 for a, b in ev]


def bench(make, nbytes):
    sets = int(min(512, max(2, math.ceil(4 * L2 / nbytes))))
    calls = [make() for _ in range(sets)]
    for c in calls:
        c()
    cold = stats(time_events(100, True, lambda i: calls[i % sets]()))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            calls[0]()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        keep = [calls[0]() for _ in range(20)]
    for _ in range(3):
        g.replay()
    warm = stats([t / 20 for t in time_events(15, False, lambda i: g.replay())])
    del keep
    return {"cold_us": cold[0], "cold_p10_us": cold[1], "cold_p90_us": cold[2], "graph_us": warm[0],
            "buffer_sets": sets}


# --- model formulas ---------------------------------------------------------------------------
def hf_rms(x, w, eps=1e-6):  # transformers Qwen3RMSNorm / diffusers RMSNorm with weight
    xf = x.float()
    return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def rms_noaffine(x, eps=1e-6):  # diffusers RMSNorm(elementwise_affine=False)
    return (x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def diffusers_rope(x, cos, sin):
    xr, xi = x.unflatten(2, (-1, 2)).unbind(-1)
    rot = torch.stack([-xi, xr], dim=-1).flatten(2)
    return (x.float() * cos + rot.float() * sin).to(x.dtype)


def rope_qk(q, k, cos, sin):
    return diffusers_rope(q, cos, sin), diffusers_rope(k, cos, sin)


def norm_rope_qk(q, k, wq, wk, cos, sin):
    return diffusers_rope(F.rms_norm(q, (q.shape[-1],), wq, 1e-5), cos, sin), diffusers_rope(
        F.rms_norm(k, (k.shape[-1],), wk, 1e-5), cos, sin)


def adaln_eager(x, table, temb):
    b, _, d = x.shape
    ada = table[None, None] + temb.reshape(b, 1, 6, d)
    shift, scale = ada[:, :, 0], ada[:, :, 1]
    return rms_noaffine(x) * (1 + scale) + shift


def geglu_eager(x):
    h, g = x.chunk(2, dim=-1)
    return h * F.gelu(g)


def ltx_full_tables(b, fr, h, w, dim=2048, theta=10000.0):
    gf, gh, gw = torch.meshgrid(torch.arange(fr, device="cuda", dtype=torch.float32),
                                torch.arange(h, device="cuda", dtype=torch.float32),
                                torch.arange(w, device="cuda", dtype=torch.float32), indexing="ij")
    grid = torch.stack([gf * (8 / 25) / 20, gh * 32 / 2048, gw * 32 / 2048], dim=0).flatten(1).t()[None]
    freqs = theta ** torch.linspace(math.log(1.0, theta), math.log(theta, theta), dim // 6, device="cuda",
                                    dtype=torch.float32)
    freqs = freqs * math.pi / 2.0
    freqs = (freqs * (grid.unsqueeze(-1) * 2 - 1)).transpose(-1, -2).flatten(2)
    cos, sin = freqs.cos().repeat_interleave(2, dim=-1), freqs.sin().repeat_interleave(2, dim=-1)
    pad = dim % 6
    cos = torch.cat([torch.ones_like(cos[:, :, :pad]), cos], dim=-1)
    sin = torch.cat([torch.zeros_like(sin[:, :, :pad]), sin], dim=-1)
    return cos.expand(b, -1, -1).contiguous(), sin.expand(b, -1, -1).contiguous()


# Each case: (op, shape, dtype, bytes, make_inputs, {baseline name: fn}, compile?, khub) where
# khub(ops) -> (make_inputs, fn) calls khub's op as kernels_bench does (its first output), or is None.
def rms_case(s, dt, compiled):
    n = math.prod(s)
    mk = lambda: (torch.randn(s, device="cuda", dtype=dt), torch.randn(s[-1], device="cuda", dtype=dt) * 0.1 + 1)
    return ("rms_norm", list(s), dt, esize(dt) * (2 * n + s[-1]), mk,
            {"eager_hf": hf_rms, "F.rms_norm": lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6)}, compiled,
            lambda ops: (mk, lambda x, w: ops["rmsnorm"].rms_norm(x, w, 1e-6)))


def fused_add_case(dt, s=(2, 2688, 2048)):
    mk = lambda: (torch.randn(s, device="cuda", dtype=dt), torch.randn(s, device="cuda", dtype=dt),
                  torch.ones(s[-1], device="cuda", dtype=dt))
    return ("fused_add_rms_norm", list(s), dt, esize(dt) * (4 * math.prod(s) + s[-1]), mk,
            {"eager_hf": lambda x, r, w: (hf_rms(x + r, w), x + r)}, True,
            lambda ops: (mk, lambda x, r, w: ops["rmsnorm"].fused_add_rms_norm(x, r, w, 1e-6)[0]))


def ltx_table_operands(rope, fr, h, w, d):
    """khub's table form of the LTX grid (as kernels_bench builds it): per-axis cos / sin rows and
    each token's three row indices."""
    f32 = dict(device="cuda", dtype=torch.float32)
    pos = torch.cat([torch.arange(fr, **f32) * (8 / 25) / 20, torch.arange(h, **f32) / 64, torch.arange(w, **f32) / 64])
    cos, sin = rope.ltx_rope_tables(pos, d, 10000.0)
    g = torch.meshgrid(torch.arange(fr), torch.arange(h) + fr, torch.arange(w) + fr + h, indexing="ij")
    return cos, sin, torch.stack(g, -1).reshape(1, fr * h * w, 3).to(torch.int32).cuda()


def rope_table_case(fr, norm, dt):
    b, S, d = 2, fr * 16 * 24, 2048

    def mk():
        cos, sin = ltx_full_tables(b, fr, 16, 24)
        q = torch.randn(b, S, d, device="cuda", dtype=dt)
        k = torch.randn(b, S, d, device="cuda", dtype=dt)
        w = torch.randn(d, device="cuda", dtype=dt) * 0.1 + 1
        return (q, k, w, w, cos, sin) if norm else (q, k, cos, sin)

    def khub(ops):
        rope = ops["rope3d"]

        def mk_khub():
            q, k = torch.randn(b, S, d, device="cuda", dtype=dt), torch.randn(b, S, d, device="cuda", dtype=dt)
            tables = ltx_table_operands(rope, fr, 16, 24, d)
            if not norm:
                return (q, k, *tables)
            wq, wk = (torch.randn(d, device="cuda", dtype=dt) * 0.1 + 1 for _ in range(2))
            return (q, k, wq, wk, *tables)
        if norm:
            return mk_khub, lambda q, k, wq, wk, c, s, i: rope.rms_norm_rope_table_qk(q, k, wq, wk, 1e-5, c, s, i)[0]
        return mk_khub, lambda q, k, c, s, i: rope.apply_rotary_emb_table_qk(q, k, c, s, i)[0]
    op = "rms_norm_rope_table_qk" if norm else "apply_rotary_emb_table_qk"
    return (op, [b, S, d, "x2"], dt, esize(dt) * 4 * b * S * d, mk,
            {"eager_diffusers": norm_rope_qk if norm else rope_qk}, True, khub)


def adaln_case(b, S, d, dt):
    mk = lambda: (torch.randn(b, S, d, device="cuda", dtype=dt), torch.randn(6, d, device="cuda", dtype=dt) * 0.1,
                  torch.randn(b, 1, 6 * d, device="cuda", dtype=dt) * 0.1)
    return ("adaln_rms_table", [b, S, d], dt, esize(dt) * 2 * b * S * d, mk, {"eager_diffusers": adaln_eager}, True,
            lambda ops: (mk, lambda x, table, temb: ops["adaln"].adaln_rms_table(x, table, temb, 0, 1e-6)))


def geglu_case(b, S, h, dt, compiled):
    mk = lambda: (torch.randn(b, S, 2 * h, device="cuda", dtype=dt),)
    return ("geglu", [b, S, 2 * h], dt, esize(dt) * 3 * b * S * h, mk, {"eager_diffusers": geglu_eager}, compiled,
            lambda ops: (mk, lambda x: ops["geglu"].geglu(x, False)))


def gelu_tanh_case(dt):
    mk = lambda: (torch.randn(2, 2688, 8192, device="cuda", dtype=dt),)
    return ("gelu_tanh", [2, 2688, 8192], dt, esize(dt) * 2 * 2 * 2688 * 8192, mk,
            {"eager": lambda x: F.gelu(x, approximate="tanh")}, True,
            lambda ops: (mk, lambda x: ops["geglu"].gelu_tanh(x)))


def cases():
    """The bf16 suite, then the fp16 / fp32 subset (kernels_bench runs the same)."""
    rms_shapes = [(2, 2688, 2048), (2, 8064, 2048), (4, 4096, 3072), (1, 8192, 4096), (1, 2048, 4096),
                  (1, 128, 4096), (64, 1, 4096), (1, 1, 4096), (2, 128, 2048), (1, 1024, 2048), (2, 1024, 2048),
                  (4, 1024, 2048), (1, 4096, 2048), (2, 4096, 3072), (1, 8192, 2048), (2, 2310, 2048),
                  (2, 7392, 2048), (1, 512, 4096), (1, 1024, 4096), (1, 4096, 4096), (4, 512, 4096), (8, 256, 4096),
                  (1, 2048, 32, 128), (1, 2048, 8, 128), (1, 8192, 32, 128)]
    compiled = {(2, 2688, 2048), (2, 8064, 2048), (4, 4096, 3072), (1, 8192, 4096), (1, 2048, 4096), (1, 128, 4096),
                (64, 1, 4096), (1, 8192, 32, 128)}
    out = [rms_case(s, BF16, s in compiled) for s in rms_shapes]
    # The LTX residual stream, then Qwen3's (hidden 4096: prefill, long prefill, decode), then fewer
    # LTX rows (below the 2048 rows the fused add's dedicated kernels need for rows of 2048).
    out += [fused_add_case(BF16, s) for s in [(2, 2688, 2048), (1, 2048, 4096), (1, 8192, 4096), (64, 1, 4096),
                                              (1, 1024, 2048), (2, 128, 2048)]]
    out += [rope_table_case(fr, norm, BF16) for fr, norm in [(7, False), (7, True), (21, False)]]
    for (b, S, d) in [(2, 2688, 2048), (2, 8064, 2048)]:
        mk = lambda b=b, S=S, d=d: (torch.randn(b, S, d, device="cuda", dtype=BF16),
                                    torch.randn(b, S, d, device="cuda", dtype=BF16),
                                    *(lambda a: (a.cos(), a.sin()))(torch.randn(b, S, d, device="cuda")))
        out.append(("apply_rotary_emb_qk", [b, S, d, "x2"], BF16, 8 * b * S * d + 8 * b * S * d, mk,
                    {"eager_diffusers": rope_qk}, False,
                    lambda ops, mk=mk: (mk, lambda q, k, c, s: ops["rope3d"].apply_rotary_emb_qk(q, k, c, s)[0])))
    out += [adaln_case(b, S, d, BF16) for (b, S, d) in [(2, 2688, 2048), (2, 8064, 2048)]]
    out += [geglu_case(b, S, h, BF16, (b, S, h) in {(2, 1024, 2048), (2, 2688, 8192)})
            for (b, S, h) in [(2, 1024, 2048), (2, 4096, 1280), (2, 1024, 5120), (2, 2688, 8192)]]
    out.append(gelu_tanh_case(BF16))
    for dt in (torch.float16, torch.float32):
        out += [rms_case(s, dt, True) for s in [(2, 2688, 2048), (4, 4096, 3072), (1, 8192, 32, 128)]]
        out += [fused_add_case(dt), rope_table_case(7, False, dt), rope_table_case(7, True, dt),
                adaln_case(2, 2688, 2048, dt), geglu_case(2, 2688, 8192, dt, True), gelu_tanh_case(dt)]
    return out


def load_khub(variants_root, pattern="torch2*-cxx11-cu1*"):
    """khub's variants named by pattern under variants_root/<kernel>/build/ (default: the plain torch CUDA
    builds; one flavour a call, as both flavours' ops have the same names), loaded: {kernel name: its
    torch.ops namespace}."""
    ids = {}
    for meta in glob.glob(os.path.join(variants_root, "*", "build", pattern, "metadata.json")):
        m = json.load(open(meta))
        torch.ops.load_library(os.path.join(os.path.dirname(meta), m["id"] + ".abi3.so"))
        ids[m["name"]] = getattr(torch.ops, m["id"])
    return ids


def load_khub_ffi(variants_root, pattern="tvm-ffi01-cu1*"):
    """khub's tvm-ffi variants (no torch inside; torch tensors go in through DLPack) imported the way the
    Python kernels client imports a variant: the package <variant>/__init__.py under its metadata id.
    {kernel name: package}; ImportError without the tvm_ffi package."""
    import importlib.util
    import tvm_ffi  # noqa: F401 - each package imports it; missing, the flavour is reported unavailable
    packages = {}
    for meta in glob.glob(os.path.join(variants_root, "*", "build", pattern, "metadata.json")):
        m, vdir = json.load(open(meta)), os.path.dirname(meta)
        spec = importlib.util.spec_from_file_location(m["id"], os.path.join(vdir, "__init__.py"),
                                                      submodule_search_locations=[vdir])
        package = importlib.util.module_from_spec(spec)
        sys.modules[m["id"]] = package
        spec.loader.exec_module(package)
        packages[m["name"]] = package
    return packages


def check_khub(ids):
    """Compares each of khub's ops with the eager formula (bf16)."""
    res = {}
    x = torch.randn(2, 2688, 2048, device="cuda", dtype=BF16)
    w = torch.randn(2048, device="cuda", dtype=BF16) * 0.1 + 1
    ref = F.rms_norm(x, (2048,), w, 1e-6)
    res["rms_norm_vs_F.rms_norm_max_abs"] = (ids["rmsnorm"].rms_norm(x, w, 1e-6).float() - ref.float()).abs().max().item()
    q = torch.randn(2, 2688, 2048, device="cuda", dtype=BF16)
    cos, sin = ltx_full_tables(2, 7, 16, 24)
    yq, _ = ids["rope3d"].apply_rotary_emb_qk(q, q, cos, sin)
    res["rope_api_vs_diffusers_max_abs"] = (yq.float() - diffusers_rope(q, cos, sin).float()).abs().max().item()
    xg = torch.randn(2, 1024, 4096, device="cuda", dtype=BF16)
    res["geglu_vs_eager_max_abs"] = (ids["geglu"].geglu(xg, False).float() - geglu_eager(xg).float()).abs().max().item()
    table = torch.randn(6, 2048, device="cuda", dtype=BF16) * 0.1
    temb = torch.randn(2, 1, 6 * 2048, device="cuda", dtype=BF16) * 0.1
    ya = ids["adaln"].adaln_rms_table(x, table, temb, 0, 1e-6)
    res["adaln_vs_eager_max_abs"] = (ya.float() - adaln_eager(x, table, temb).float()).abs().max().item()
    return res


def env():
    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0),
            "l2_bytes": L2}
    try:
        info["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version,clocks.sm,clocks.mem,clocks.max.sm,ecc.mode.current,"
             "power.limit,temperature.gpu", "--format=csv"], capture_output=True, text=True, timeout=20).stdout
    except Exception as e:  # noqa: BLE001
        info["nvidia_smi"] = str(e)
    return info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="default: bench/results/<machine>_baselines.json")
    ap.add_argument("--variants", default="kernels")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--no-khub", action="store_true", help="skip timing khub's ops in this process")
    ap.add_argument("--dtypes", default="bfloat16,float16,float32", help="comma-separated subset of the cases' dtypes")
    ap.add_argument("--commit",
                    help="khub source commit of the ops timed in this process (default: $KHUB_COMMIT, else git HEAD)")
    ap.add_argument("--ops", default="", help="comma-separated op names to run (default: all)")
    a = ap.parse_args()
    doc = {"harness": "baselines.py (PyTorch, CUDA events)", "commit": source_commit(a.commit), **env()}
    src = torch.empty(1 << 29, device="cuda", dtype=torch.float16)
    dst = torch.empty_like(src)
    c = stats(time_events(20, False, lambda i: dst.copy_(src)))
    doc["copy_1gib_us"] = c[0]
    doc["copy_tbps"] = 2 * (1 << 30) / c[0] / 1e6
    print(f"{doc['gpu']} torch {doc['torch']}; copy 1 GiB {c[0]:.1f} us = {doc['copy_tbps']:.2f} TB/s", flush=True)
    ops = load_khub(a.variants)
    doc["khub_correctness"] = check_khub(ops)
    print("khub vs eager:", doc["khub_correctness"], flush=True)
    results = []
    dtypes = set(a.dtypes.split(","))
    only_ops = set(filter(None, a.ops.split(",")))
    for op, shape, dt, nbytes, mk, fns, comp, khub in cases():
        if DTYPE_NAMES[dt] not in dtypes or (only_ops and op not in only_ops):
            continue
        todo = {name: (mk, fn) for name, fn in fns.items()}
        if comp and not a.no_compile:
            # Dynamo caches per function: compiling one function at a ninth shape or dtype would hit
            # its recompile limit and silently run eager (the first fp16 run did).
            torch._dynamo.reset()
            todo["torch.compile"] = (mk, torch.compile(next(iter(fns.values())), dynamic=False))
        if not a.no_khub:
            try:
                todo[KHUB] = khub(ops)
            except Exception as e:  # noqa: BLE001
                print(f"{op} {shape} {KHUB}: not timed: {e!r}", flush=True)
        for name, (mk_args, fn) in todo.items():
            def make(fn=fn, mk=mk_args):
                args = mk()
                return lambda: fn(*args)
            try:
                r = bench(make, nbytes)
            except Exception as e:  # noqa: BLE001
                print(f"{op} {shape} {name}: failed: {e}", flush=True)
                continue
            r.update({"op": op, "shape": shape, "dtype": DTYPE_NAMES[dt], "baseline": name, "bytes": nbytes,
                      "cold_tbps": nbytes / r["cold_us"] / 1e6})
            print(f"{op:28s} {str(shape):26s} {DTYPE_NAMES[dt]:9s} {name:16s} cold {r['cold_us']:9.2f} "
                  f"graph {r['graph_us']:9.2f}", flush=True)
            results.append(r)
        torch.cuda.empty_cache()
    doc["results"] = results
    doc["provenance"] = provenance(doc["commit"], gpu=doc["gpu"])
    dump(doc, a.out or RESULTS / f"{machine_label(doc['gpu'])}_baselines.json")


if __name__ == "__main__":
    main()
