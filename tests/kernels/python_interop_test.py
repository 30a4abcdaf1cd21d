"""The official Python `kernels` client imports khub's built variant dirs and runs their ops.

usage: python_interop_test.py <kernels source dir>   (ctest: kernels_python_interop, label torch)
Loads each kernel with kernels.get_local_kernel(<kernel>/build, backend="cpu"), which prefers the
torch-stable-abi210-cpu-<arch>-linux variant (any torch >= 2.10) over torch<MM>-cxx11-cpu-<arch>-linux
when both are built (the default), and checks results on CPU.
"""
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from kernels import get_local_kernel

root = Path(sys.argv[1])


def load(name):
    kernel = get_local_kernel(root / name / "build", backend="cpu", trust_remote_code=True)
    # The variant Python chose: the stable-ABI one whenever it was built.
    variant = Path(kernel.__file__).parent.name
    if any(p.name.startswith("torch-stable-abi") for p in (root / name / "build").iterdir()):
        assert variant.startswith("torch-stable-abi210-cpu-"), variant
        assert "_stable_" in kernel.ops.name, kernel.ops.name
    return kernel


def close(a, b, tol=2e-2):
    err = (a.double() - b.double()).abs().max().item()
    assert err <= tol * max(1.0, b.double().abs().max().item()), err


torch.manual_seed(0)
x = torch.randn(4, 2048, dtype=torch.bfloat16)
w = torch.randn(2048, dtype=torch.bfloat16) * 0.1 + 1

rms = load("rmsnorm")
close(rms.rms_norm(x, w, 1e-6), F.rms_norm(x.float(), (2048,), w.float(), 1e-6))
normed, s = rms.fused_add_rms_norm(x, x, w, 1e-6)
assert torch.equal(s, x + x)
assert str(rms.ops.rms_norm.default).startswith("_rmsnorm_cpu_")

geglu = load("geglu")
xg = torch.randn(3, 512, dtype=torch.bfloat16)
h, g = xg.float().chunk(2, dim=-1)
close(geglu.geglu(xg), h * F.gelu(g))
close(geglu.gelu_tanh(xg), F.gelu(xg.float(), approximate="tanh"))

adaln = load("adaln")
x3 = torch.randn(2, 5, 256, dtype=torch.bfloat16)
scale = torch.randn(2, 1, 256, dtype=torch.bfloat16) * 0.1
shift = torch.randn(2, 1, 256, dtype=torch.bfloat16) * 0.1
ref = x3.float() * torch.rsqrt(x3.float().pow(2).mean(-1, keepdim=True) + 1e-6) * (1 + scale.float()) + shift.float()
close(adaln.adaln_rms(x3, scale, shift, 1e-6), ref)

rope = load("rope3d")
cos_t, sin_t, index = rope.ltx_video_tables(2, 3, 4, dim=96)
q = torch.randn(1, 24, 96, dtype=torch.bfloat16)
yq, yk = rope.apply_rotary_emb_table_qk(q, q, cos_t, sin_t, index)
assert torch.equal(yq, yk) and yq.shape == q.shape
freqs = rope.ltx_rope_freqs(96)
assert freqs.shape == (16,) and math.isclose(freqs[0].item(), math.pi / 2, rel_tol=1e-6)
print("python interop: rmsnorm, geglu, adaln, rope3d imported by kernels.get_local_kernel and correct")
