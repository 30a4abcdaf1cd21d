"""khub's ops under torch.compile: every op has a Meta registration, so fake tensors trace it.

usage: python_compile_test.py <kernels source dir>   (ctest: kernels_python_compile, label torch)
Loads each kernel's cpu variant with kernels.get_local_kernel, as python_interop_test.py does, then
  * torch.library.opcheck on every op (schema, fake tensors against the real op's outputs, and AOT
    dispatch with dynamic shapes), and
  * an LTX-style block (AdaLN -> fused q/k norm + RoPE -> GEGLU) compiled with fullgraph=True, with
    static and with dynamic shapes, equal to the eager calls bit for bit.
Without the Meta registrations opcheck's fake-tensor test and the compiled block both fail.
"""
import sys
from pathlib import Path

import torch
from kernels import get_local_kernel

root = Path(sys.argv[1])
CHECKS = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")


def load(name):
    return get_local_kernel(root / name / "build", backend="cpu", trust_remote_code=True)


def opcheck(ops, name, *args):
    result = torch.library.opcheck(getattr(ops, name).default, args, test_utils=CHECKS)
    failed = {k: v for k, v in result.items() if v != "SUCCESS"}
    assert not failed, f"{name}: {failed}"


torch.manual_seed(0)
bf16 = torch.bfloat16
rms, geglu, adaln, rope = load("rmsnorm"), load("geglu"), load("adaln"), load("rope3d")

B, S, D = 2, 24, 96
x = torch.randn(B, S, D, dtype=bf16)
w = torch.randn(D, dtype=bf16) * 0.1 + 1
opcheck(rms.ops, "rms_norm", x, w, 1e-6)
opcheck(rms.ops, "rms_norm_rounding", x, None, 1e-6, "qwen3")
opcheck(rms.ops, "fused_add_rms_norm", x, x.flip(0), w, 1e-6)

opcheck(geglu.ops, "geglu", torch.randn(B, S, 2 * D, dtype=bf16), False)
opcheck(geglu.ops, "geglu", torch.randn(B, S, 2 * D, dtype=bf16), True)
opcheck(geglu.ops, "gelu_tanh", x)

scale, shift, gate = (torch.randn(B, 1, D, dtype=bf16) * 0.1 for _ in range(3))
table, temb = torch.randn(6, D, dtype=bf16) * 0.1, torch.randn(B, 1, 6 * D, dtype=bf16) * 0.1
opcheck(adaln.ops, "adaln_rms", x, scale, shift, 1e-6)
opcheck(adaln.ops, "adaln_rms_table", x, table, temb, 0, 1e-6)
opcheck(adaln.ops, "gated_residual_adaln_rms", x, x.flip(1), gate, scale, shift, 1e-6)
opcheck(adaln.ops, "gated_residual_adaln_rms_table", x, x.flip(1), table, temb, 2, 0, 1e-6)

cos_t, sin_t, index = rope.ltx_video_tables(2, 3, 4, dim=D)  # S = 2 * 3 * 4 tokens
cos, sin = torch.randn(1, S, D), torch.randn(1, S, D)
coords, freqs = torch.rand(1, S, 3), rope.ltx_rope_freqs(D)
q, k = torch.randn(B, S, D, dtype=bf16), torch.randn(B, S, D, dtype=bf16)
opcheck(rope.ops, "apply_rotary_emb", q, cos, sin)
opcheck(rope.ops, "apply_rotary_emb_qk", q, k, cos, sin)
opcheck(rope.ops, "apply_rotary_emb_table_qk", q, k, cos_t, sin_t, index)
opcheck(rope.ops, "apply_rotary_emb_coords_qk", q, k, coords, freqs)
opcheck(rope.ops, "rms_norm_rope_table_qk", q, k, w, w, 1e-5, cos_t, sin_t, index)
opcheck(rope.ops, "ltx_rope_tables", torch.rand(5), D, 10000.0)


def block(h, q, k, table, temb, cos_t, sin_t, index, w, up):
    a = adaln.adaln_rms_table(h, table, temb, 0, 1e-6)
    qn, kn = rope.rms_norm_rope_table_qk(q, k, w, w, 1e-5, cos_t, sin_t, index)
    return a + qn * kn, geglu.geglu(up)


up = torch.randn(B, S, 2 * D, dtype=bf16)
args = (x, q, k, table, temb, cos_t, sin_t, index, w, up)
want = block(*args)
for dynamic in (False, True):
    torch._dynamo.reset()
    got = torch.compile(block, fullgraph=True, dynamic=dynamic, backend="aot_eager")(*args)
    assert all(torch.equal(g, e) for g, e in zip(got, want)), f"compiled block (dynamic={dynamic}) differs"

print("python compile: every op passes opcheck (schema, fake tensors, dynamic AOT); the block compiles "
      "with fullgraph=True and matches eager")
