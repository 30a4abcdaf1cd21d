"""The bundled kernels' tvm-ffi variants compute exactly what their torch-stable-abi variants compute.

usage: tvm_ffi_variants_test.py <kernels source dir> [cpu|cuda]
        (ctest: kernels_tvm_ffi_variants, labels torch;interop; kernels_tvm_ffi_variants_gpu, label gpu)
Imports each kernel's tvm-ffi01-<backend> variant dir and its torch-stable-abi210 one as packages (the way
the Python `kernels` client imports a variant: module named metadata.id, from <variant>/__init__.py), runs
every op of the tvm-ffi build on the same torch tensors (passed through DLPack) and compares bit for bit;
the outputs are caller-allocated there and returned by the package's wrappers. Also checks the error kinds
(TypeError for a dtype, ValueError for a shape) and that each module exports `<op>_cpu` (and `<op>_cuda`).
"""
import importlib.util
import json
import sys
from pathlib import Path

import torch

root = Path(sys.argv[1])
device = sys.argv[2] if len(sys.argv) > 2 else "cpu"
backend = "cpu" if device == "cpu" else "cu"


def variant_dir(name, prefix):
    dirs = [p for p in (root / name / "build").iterdir() if p.name.startswith(prefix + backend)]
    assert len(dirs) == 1, (name, prefix, dirs)
    return dirs[0]


def load(vdir):
    meta = json.loads((vdir / "metadata.json").read_text())
    spec = importlib.util.spec_from_file_location(meta["id"], vdir / "__init__.py",
                                                  submodule_search_locations=[str(vdir)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[meta["id"]] = module
    spec.loader.exec_module(module)
    return module


def pair(name):
    ffi = load(variant_dir(name, "tvm-ffi01-"))
    stable = load(variant_dir(name, "torch-stable-abi210-"))
    assert ffi.ops is not None
    return ffi, stable


def same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert torch.equal(a, b), (a.double() - b.double()).abs().max().item()


def raises(kind, fn, *args):
    try:
        fn(*args)
    except kind as e:
        return str(e)
    raise AssertionError(f"expected {kind.__name__}")


torch.manual_seed(0)
dev = torch.device(device)
bf = dict(dtype=torch.bfloat16, device=dev)

rms, rms_s = pair("rmsnorm")
x = torch.randn(6, 2048, **bf)
w = torch.randn(2048, **bf) * 0.1 + 1
r = torch.randn(6, 2048, **bf)
same(rms.rms_norm(x, w, 1e-6), rms_s.rms_norm(x, w, 1e-6))
same(rms.rms_norm(x, None, 1e-6), rms_s.rms_norm(x, None, 1e-6))
same(rms.rms_norm(x.float(), w.float(), 1e-6), rms_s.rms_norm(x.float(), w.float(), 1e-6))
for rounding in ("fused", "qwen3", "diffusers"):
    same(rms.rms_norm_rounding(x, w, 1e-6, rounding), rms_s.rms_norm_rounding(x, w, 1e-6, rounding))
same(rms.fused_add_rms_norm(x, r, w, 1e-6), rms_s.fused_add_rms_norm(x, r, w, 1e-6))
xs = torch.randn(2, 16, 256, **bf)[:, ::2, :128]  # strided rows (non-contiguous DLPack strides)
same(rms.rms_norm(xs, None, 1e-6), rms_s.rms_norm(xs, None, 1e-6))
msg = raises(ValueError, rms.rms_norm, torch.randn(2, 3, 8, 128, **bf).transpose(1, 2), None, 1e-6)
assert "leading dimensions cannot be collapsed" in msg, msg
msg = raises(TypeError, rms.rms_norm, x.to(torch.int32), None, 1e-6)
assert "unsupported dtype int32" in msg, msg
msg = raises(ValueError, rms.rms_norm, x, w[:100], 1e-6)
assert "weight must have shape [2048]" in msg, msg
msg = raises(ValueError, rms.rms_norm_rounding, x, w, 1e-6, "bad")
assert "unknown rounding convention 'bad'" in msg, msg
names = {n for n in ("rms_norm_cpu", "rms_norm_cuda") if hasattr(rms.ops, n)}
assert "rms_norm_cpu" in names and (device == "cpu" or "rms_norm_cuda" in names), names

geglu, geglu_s = pair("geglu")
xg = torch.randn(5, 1024, **bf)
same(geglu.geglu(xg), geglu_s.geglu(xg))
same(geglu.geglu(xg, True), geglu_s.geglu(xg, True))
same(geglu.gelu_tanh(xg), geglu_s.gelu_tanh(xg))
raises(ValueError, geglu.geglu, xg[:, :1023])

adaln, adaln_s = pair("adaln")
x3 = torch.randn(2, 5, 256, **bf)
scale = torch.randn(2, 1, 256, **bf) * 0.1
shift = torch.randn(2, 1, 256, **bf) * 0.1
gate = torch.randn(2, 5, 256, **bf) * 0.1
delta = torch.randn(2, 5, 256, **bf)
table = torch.randn(6, 256, **bf)
temb = torch.randn(2, 1, 6 * 256, **bf)
same(adaln.adaln_rms(x3, scale, shift, 1e-6), adaln_s.adaln_rms(x3, scale, shift, 1e-6))
same(adaln.adaln_rms_table(x3, table, temb, 3, 1e-6), adaln_s.adaln_rms_table(x3, table, temb, 3, 1e-6))
same(adaln.gated_residual_adaln_rms(x3, delta, gate, scale, shift, 1e-6),
     adaln_s.gated_residual_adaln_rms(x3, delta, gate, scale, shift, 1e-6))
same(adaln.gated_residual_adaln_rms_table(x3, delta, table, temb, 2, 0, 1e-6),
     adaln_s.gated_residual_adaln_rms_table(x3, delta, table, temb, 2, 0, 1e-6))
raises(ValueError, adaln.adaln_rms_table, x3, table, temb, 5, 1e-6)

rope, rope_s = pair("rope3d")
cos_t, sin_t, index = rope_s.ltx_video_tables(2, 3, 4, dim=96, device=dev)
q = torch.randn(1, 24, 96, **bf)
k = torch.randn(1, 24, 96, **bf)
same(rope.apply_rotary_emb_table_qk(q, k, cos_t, sin_t, index), rope_s.apply_rotary_emb_table_qk(q, k, cos_t, sin_t, index))
cos = torch.randn(1, 24, 96, dtype=torch.float32, device=dev)
sin = torch.randn(1, 24, 96, dtype=torch.float32, device=dev)
same(rope.apply_rotary_emb(q, cos, sin), rope_s.apply_rotary_emb(q, cos, sin))
same(rope.apply_rotary_emb_qk(q, k, cos, sin), rope_s.apply_rotary_emb_qk(q, k, cos, sin))
coords = torch.rand(1, 24, 3, dtype=torch.float32, device=dev)
freqs = rope_s.ltx_rope_freqs(96, device=dev)
same(rope.apply_rotary_emb_coords_qk(q, k, coords, freqs), rope_s.apply_rotary_emb_coords_qk(q, k, coords, freqs))
qw = torch.randn(96, **bf)
same(rope.rms_norm_rope_table_qk(q, k, qw, qw, 1e-6, cos_t, sin_t, index),
     rope_s.rms_norm_rope_table_qk(q, k, qw, qw, 1e-6, cos_t, sin_t, index))
same(rope.rms_norm_rope_table_qk(q, k, None, None, 1e-6, cos_t, sin_t, index),
     rope_s.rms_norm_rope_table_qk(q, k, None, None, 1e-6, cos_t, sin_t, index))
if device == "cpu":
    bad = index.clone()
    bad[0, 0, 0] = 1000
    msg = raises(ValueError, rope.apply_rotary_emb_table_qk, q, k, cos_t, sin_t, bad)
    assert "index values must lie in" in msg, msg
if device == "cuda":
    torch.cuda.synchronize()
print(f"tvm-ffi variants ({device}) equal the stable-ABI ones")
