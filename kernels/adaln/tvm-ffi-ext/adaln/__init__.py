"""khub adaln (tvm-ffi build): LTX-Video AdaLN, y = rms_norm(x, eps) * (1 + scale) + shift (no weight), on any
DLPack arrays (torch, numpy, ...), without torch; fp32 math, one rounding. Table form: shift = table[c] +
temb[..., c*D:(c+1)*D], scale = chunk c + 1. Gated residual: h_new = h + gate * delta, then AdaLN of h_new;
returns (y, h_new). Outputs are optional arguments (allocated from x's own library when absent)."""
import sys

import tvm_ffi

from ._ops import ops


def _empty_like(x):
    return sys.modules[type(x).__module__.split(".")[0]].empty_like(x)


def _call(name, x, *args):
    device = tvm_ffi.from_dlpack(x).device.type
    fn = getattr(ops, f"{name}_{device}", None)
    if fn is None:
        raise NotImplementedError(f"{name}: no implementation for device type {device}")
    fn(*args)  # arrays as they are: tvm-ffi converts them (and uses torch's current CUDA stream)


def adaln_rms(x, scale, shift, eps: float = 1e-6, out=None):
    out = _empty_like(x) if out is None else out
    _call("adaln_rms", x, out, x, scale, shift, eps)
    return out


def adaln_rms_table(x, table, temb, shift_chunk: int, eps: float = 1e-6, out=None):
    out = _empty_like(x) if out is None else out
    _call("adaln_rms_table", x, out, x, table, temb, shift_chunk, eps)
    return out


def gated_residual_adaln_rms(h, delta, gate, scale, shift, eps: float = 1e-6, out=None, h_out=None):
    out = _empty_like(h) if out is None else out
    h_out = _empty_like(h) if h_out is None else h_out
    _call("gated_residual_adaln_rms", h, out, h_out, h, delta, gate, scale, shift, eps)
    return out, h_out


def gated_residual_adaln_rms_table(h, delta, table, temb, gate_chunk: int, shift_chunk: int, eps: float = 1e-6,
                                   out=None, h_out=None):
    out = _empty_like(h) if out is None else out
    h_out = _empty_like(h) if h_out is None else h_out
    _call("gated_residual_adaln_rms_table", h, out, h_out, h, delta, table, temb, gate_chunk, shift_chunk, eps)
    return out, h_out


__all__ = ["adaln_rms", "adaln_rms_table", "gated_residual_adaln_rms", "gated_residual_adaln_rms_table", "ops"]
