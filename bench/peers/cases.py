"""The peers suite: each case is an op at one shape (bf16), its canonical inputs (khub's arrangement),
the fp32 reference of its first output and the bytes it must move at least. Shapes: the bf16 rows of
bench/kernels/baselines.py (the ops.md shapes) for the ops that a peer library also offers, then the
decode rows (at most 256 rows, hidden 2048-8192). Needs only torch; runs on any device."""
import math
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

EPS = 1e-6
BF16 = torch.bfloat16


@dataclass
class Case:
    op: str  # rms_norm, qk_norm, fused_add_rms_norm, geglu_erf, geglu_tanh, gelu_tanh
    shape: list  # the input's shape (geglu: [.., 2*hidden])
    group: str  # "ops.md" or "decode"
    nbytes: int  # bytes read + written at least
    make: Callable  # make(device) -> dict of inputs, khub's arrangement
    reference: Callable  # reference(inputs) -> fp32 tensor, the first output


def _randn(shape, device):
    return torch.randn(shape, device=device, dtype=BF16)


def _weight(n, device):
    return torch.randn(n, device=device, dtype=BF16) * 0.1 + 1


def rms_ref(x, w):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()


def geglu_ref(x, approximate):
    """diffusers GEGLU, khub's order: value = first half, gate = second half, h * gelu(g)."""
    h, g = x.float().chunk(2, dim=-1)
    return h * F.gelu(g, approximate=approximate)


def rms_case(shape, group):
    n = math.prod(shape)
    op = "qk_norm" if len(shape) == 4 or (group == "decode" and shape[-1] == 128) else "rms_norm"
    return Case(op, list(shape), group, 2 * (2 * n + shape[-1]),
                lambda d: {"x": _randn(shape, d), "w": _weight(shape[-1], d)},
                lambda i: rms_ref(i["x"], i["w"]))


def fused_add_case(shape, group):
    n = math.prod(shape)
    return Case("fused_add_rms_norm", list(shape), group, 2 * (4 * n + shape[-1]),
                lambda d: {"x": _randn(shape, d), "r": _randn(shape, d), "w": _weight(shape[-1], d)},
                lambda i: rms_ref(i["x"].float() + i["r"].float(), i["w"]))


def geglu_case(shape, approximate):
    n = math.prod(shape)
    return Case("geglu_tanh" if approximate == "tanh" else "geglu_erf", list(shape), "ops.md", 2 * (n + n // 2),
                lambda d: {"x": _randn(shape, d)}, lambda i: geglu_ref(i["x"], approximate))


def gelu_tanh_case(shape):
    n = math.prod(shape)
    return Case("gelu_tanh", list(shape), "ops.md", 2 * 2 * n, lambda d: {"x": _randn(shape, d)},
                lambda i: F.gelu(i["x"].float(), approximate="tanh"))


DECODE_ROWS = (1, 16, 64, 256)
DECODE_HIDDEN = (2048, 4096, 8192)
QK_HEADS = (32, 8)  # q and k heads of a GQA model, head dim 128


def decode_cases():
    out = [rms_case((m, h), "decode") for h in DECODE_HIDDEN for m in DECODE_ROWS]
    out += [fused_add_case((m, h), "decode") for h in DECODE_HIDDEN for m in DECODE_ROWS]
    out += [rms_case((m, heads, 128), "decode") for heads in QK_HEADS for m in DECODE_ROWS]
    return out


def opsmd_cases(baseline_cases):
    """The bf16 rows of baselines.cases() (op, shape, dtype, ...) whose op a peer also offers; GEGLU
    rows become one erf and one tanh case each."""
    out, seen = [], set()
    for op, shape, dt, *_ in baseline_cases:
        key = (op, tuple(shape))
        if dt != BF16 or key in seen:
            continue
        seen.add(key)
        if op == "rms_norm":
            out.append(rms_case(tuple(shape), "ops.md"))
        elif op == "fused_add_rms_norm":
            out.append(fused_add_case(tuple(shape), "ops.md"))
        elif op == "geglu":
            out += [geglu_case(tuple(shape), "none"), geglu_case(tuple(shape), "tanh")]
        elif op == "gelu_tanh":
            out.append(gelu_tanh_case(tuple(shape)))
    return out


# Ops of the ops.md suite that no peer library offers in the same form (recorded in the JSON).
NO_PEER = {
    "apply_rotary_emb_qk": "LTX's interleaved RoPE over full cos/sin tables: no peer op with that layout",
    "apply_rotary_emb_table_qk": "RoPE from per-axis tables and row indices: khub-only form",
    "rms_norm_rope_table_qk": "fused q/k RMSNorm + table RoPE: khub-only form",
    "adaln_rms_table": "AdaLN from a modulation table: no peer op",
}
