"""The LTX-Video block's non-matmul path (examples/ltx_block) in PyTorch eager and torch.compile.

Same math and shapes as the C++ example: AdaLN modulation of a weight-less RMSNorm, q/k F.rms_norm
(eps 1e-5) + diffusers' apply_rotary_emb with LTX's 3D tables, GELU-tanh of the feed-forward hidden.
Times with CUDA events (median of 100 after warm-up) and prints one JSON object with its provenance
(commit, date, machine; bench/record.py; on the device machine set KHUB_COMMIT); --out F also writes
it to F (bench/results/h200_ltx_block.json for the H200). examples/ltx_block prints khub's time for
the same shapes, so the two together give the speedups in docs/benchmarks.md.

--khub ROOT also times the block on khub's ops from Python, eagerly and inside torch.compile (their
Meta registrations let it trace them; fullgraph=True), with each kernel's variant for this torch
and device imported from ROOT/<kernel>/build/ as a package, no `kernels` client needed. It checks
khub's outputs against the eager block's first (max |diff| in the JSON). The compiled khub block
against the compiled PyTorch block says what custom ops add to torch.compile. On CUDA both
blocks are also compiled with mode="reduce-overhead" (CUDA graphs, the ops captured in them).
Each time is a median of one call alone ("_us", where the GPU waits for the host's work before the
first kernel: Dynamo's guards, cudagraph trees' bookkeeping) and per call in a loop of ten
("_loop_us", where the host runs ahead as in a denoising loop, unless its work per call is longer
than the GPU's).
--device cpu runs the same on the CPU (a smoke test with small shapes; perf_counter timing).
--max-rel-diff E fails the run when a khub output (eager, compiled, graphed) is further than
E x max(|eager|, 1) from the eager block's: the eager block rounds to bf16 after each op, so 2 bf16
ulps (0.016) are normal and ctest's smoke run (bench_ltx_block_cpu) allows 0.03.
Usage: python bench/ltx_block_baselines.py [--frames 7 --height 16 --width 24] [--khub kernels]
                                           [--device cpu] [--max-rel-diff E] [--out F]
"""
import argparse
import importlib.util
import json
import math
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from record import dump, provenance

D = 2048


def rope_tables(b, f, h, w, device):
    grid = torch.stack(torch.meshgrid(torch.arange(f, device=device) * (8 / 25) / 20,
                                      torch.arange(h, device=device) * 32 / 2048,
                                      torch.arange(w, device=device) * 32 / 2048, indexing="ij")).flatten(1).T
    freqs = 10000.0 ** torch.linspace(0, 1, D // 6, device=device) * (math.pi / 2)
    ang = (freqs * (grid.unsqueeze(-1) * 2 - 1)).transpose(-1, -2).flatten(1)
    pad = D % 6
    cos = torch.cat([torch.ones(ang.shape[0], pad, device=device), ang.cos().repeat_interleave(2, -1)], -1)
    sin = torch.cat([torch.zeros(ang.shape[0], pad, device=device), ang.sin().repeat_interleave(2, -1)], -1)
    return cos.expand(b, -1, -1).contiguous(), sin.expand(b, -1, -1).contiguous()


def rope(x, cos, sin):
    real, imag = x.unflatten(2, (-1, 2)).unbind(-1)
    rotated = torch.stack([-imag, real], -1).flatten(2)
    return (x.float() * cos + rotated.float() * sin).to(x.dtype)


def block(hidden, scale, shift, q, k, wq, wk, cos, sin, ff):
    n = (hidden * torch.rsqrt(hidden.float().pow(2).mean(-1, keepdim=True) + 1e-6)).to(hidden.dtype)
    n = n * (1 + scale) + shift
    qr = rope(F.rms_norm(q, (D,), wq, 1e-5), cos, sin)
    kr = rope(F.rms_norm(k, (D,), wk, 1e-5), cos, sin)
    return n, qr, kr, F.gelu(ff, approximate="tanh")


def host_us(fn, reps=30, batch=10):
    """Median host time of one call (Python, guards, launches) over loops of batch calls that are
    not waited for; on the CPU, where the ops run in the call, the time of the call."""
    cuda = torch.cuda.is_available()
    times = []
    for _ in range(reps):
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - t0) * 1e6 / batch)
    if cuda:
        torch.cuda.synchronize()
    return sorted(times)[reps // 2]


def median_us(fn, reps=100, batch=1):
    """Median time of one call. batch > 1 times that many back-to-back calls between two events and
    divides: the host runs ahead of the GPU, as in a denoising loop, so a wrapper's host time (the
    compiled function's guards) hides behind the kernels instead of adding to each call."""
    for _ in range(10):
        fn()
    if not torch.cuda.is_available():
        return host_us(fn, reps, batch)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000 / batch)
    return sorted(times)[reps // 2]


def timings(name, fn):
    """One call alone (the GPU may wait for the host), per call in a loop of ten, and on CUDA the
    host's time a call."""
    out = {f"{name}_us": median_us(fn), f"{name}_loop_us": median_us(fn, reps=30, batch=10)}
    if torch.cuda.is_available():
        out[f"{name}_host_us"] = host_us(fn)
    return out


def import_variant(root, kernel, device):
    """The kernel's variant for the running torch and device, imported from its build/ folder."""
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    backend = "cpu" if device == "cpu" else "cu" + torch.version.cuda.replace(".", "")
    path = Path(root) / kernel / "build" / f"torch{major}{minor}-cxx11-{backend}-x86_64-linux"
    if not (path / "__init__.py").is_file():
        sys.exit(f"ltx_block_baselines: no {kernel} variant at {path}; build khub_kernels for this torch first")
    spec = importlib.util.spec_from_file_location(f"khub_{kernel}", path / "__init__.py",
                                                  submodule_search_locations=[str(path)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def compile_graphed(fn, inputs, **options):
    """fn compiled with mode="reduce-overhead" (CUDA graphs through cudagraph trees, as a serving
    stack runs it), its inputs marked static (at fixed addresses, as a model's are) so the recorded
    graph copies none of them in. The marks only take on a function Dynamo has not compiled
    before, hence the new lambda."""
    for t in inputs:
        torch._dynamo.mark_static_address(t)
    return torch.compile(lambda *t: fn(*t), dynamic=False, mode="reduce-overhead", **options)


def rel_diff(got, want):
    """Largest |got - want| / max(|want|, 1) over all outputs: bf16 rounding gives ~2^-8 a step."""
    return max(((g.float() - w.float()).abs() / w.float().abs().clamp(min=1)).max().item()
               for g, w in zip(got, want))


def khub_block_fn(root, device):
    adaln, rope, geglu = (import_variant(root, k, device) for k in ("adaln", "rope3d", "geglu"))

    def khub_block(hidden, scale, shift, q, k, wq, wk, cos_t, sin_t, index, ff):
        n = adaln.adaln_rms(hidden, scale, shift, 1e-6)
        qr, kr = rope.rms_norm_rope_table_qk(q, k, wq, wk, 1e-5, cos_t, sin_t, index)
        return n, qr, kr, geglu.gelu_tanh(ff)

    return khub_block, rope.ltx_video_tables


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--frames", type=int, default=7)
    p.add_argument("--height", type=int, default=16)
    p.add_argument("--width", type=int, default=24)
    p.add_argument("--khub", metavar="ROOT", help="also time khub's ops (variants under ROOT/<kernel>/build)")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--max-rel-diff", type=float, metavar="E",
                   help="exit 1 if a khub output differs from the eager block's by more than E x max(|eager|, 1)")
    p.add_argument("--out", metavar="F", help="also write the JSON object to F")
    a = p.parse_args()
    torch.manual_seed(0)
    dev, b = a.device, 2
    s = a.frames * a.height * a.width
    bf = dict(device=dev, dtype=torch.bfloat16)
    hidden, q, k = (torch.randn(b, s, D, **bf) for _ in range(3))
    ada = torch.randn(6, D, **bf)[None, None] / 16 + torch.randn(b, 1, 6 * D, **bf).view(b, 1, 6, D) / 4
    shift, scale = ada[:, :, 0], ada[:, :, 1]
    wq, wk = (1 + 0.1 * torch.randn(D, **bf) for _ in range(2))
    ff = torch.randn(b, s, 4 * D, **bf)
    cos, sin = rope_tables(b, a.frames, a.height, a.width, dev)
    args = (hidden, scale, shift, q, k, wq, wk, cos, sin, ff)
    compiled = torch.compile(block, dynamic=False)
    gpu = torch.cuda.get_device_name() if dev == "cuda" else None
    out = {"provenance": provenance(gpu=gpu), "shape": [b, s, D], "gpu": gpu or "cpu",
           "torch": torch.__version__, **timings("eager", lambda: block(*args)),
           **timings("compile", lambda: compiled(*args))}
    if a.khub:
        khub_block, tables = khub_block_fn(a.khub, dev)
        cos_t, sin_t, index = tables(a.frames, a.height, a.width, dim=D, device=dev)
        kargs = (hidden, scale, shift, q, k, wq, wk, cos_t, sin_t, index, ff)
        want, got = block(*args), khub_block(*kargs)
        out["khub_max_abs_diff"] = max((g.float() - w.float()).abs().max().item() for g, w in zip(got, want))
        out["khub_max_rel_diff"] = rel_diff(got, want)
        khub_compiled = torch.compile(khub_block, dynamic=False, fullgraph=True)
        out["khub_compile_max_rel_diff"] = rel_diff(khub_compiled(*kargs), want)
        out |= timings("khub_eager", lambda: khub_block(*kargs))
        out |= timings("khub_compile", lambda: khub_compiled(*kargs))
        if dev == "cuda":
            khub_graphed = compile_graphed(khub_block, kargs, fullgraph=True)
            got = khub_graphed(*kargs)
            got = khub_graphed(*kargs)  # the second call replays the recorded graph
            out["khub_graphs_max_rel_diff"] = rel_diff(got, want)
            out |= timings("khub_compile_graphs", lambda: khub_graphed(*kargs))
    # Last: marking the inputs static changes how later compiles treat them.
    if dev == "cuda":
        graphed = compile_graphed(block, args)
        out |= timings("compile_graphs", lambda: graphed(*args))
    print(json.dumps(out))
    if a.out:
        dump(out, a.out)
    worst = max((v for key, v in out.items() if key.endswith("_rel_diff")), default=0.0)
    if a.max_rel_diff is not None and worst > a.max_rel_diff:
        sys.exit(f"ltx_block_baselines: khub's block differs from the eager block by {worst:.3g} "
                 f"(relative), over --max-rel-diff {a.max_rel_diff}")


if __name__ == "__main__":
    main()
