"""The LTX-Video block's non-matmul path (examples/ltx_block) in PyTorch eager and torch.compile.

Same math and shapes as the C++ example: AdaLN modulation of a weight-less RMSNorm, q/k F.rms_norm
(eps 1e-5) + diffusers' apply_rotary_emb with LTX's 3D tables, GELU-tanh of the feed-forward hidden.
Times with CUDA events (median of 100 after warm-up) and prints one JSON object; examples/ltx_block
prints khub's time for the same shapes, so the two together give the speedups in docs/benchmarks.md.
Usage: python bench/ltx_block_baselines.py [--frames 7 --height 16 --width 24]
"""
import argparse
import json
import math

import torch
import torch.nn.functional as F

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


def median_us(fn, reps=100):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return sorted(times)[reps // 2]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--frames", type=int, default=7)
    p.add_argument("--height", type=int, default=16)
    p.add_argument("--width", type=int, default=24)
    a = p.parse_args()
    dev, b = "cuda", 2
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
    out = {"shape": [b, s, D], "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "eager_us": median_us(lambda: block(*args)), "compile_us": median_us(lambda: compiled(*args))}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
