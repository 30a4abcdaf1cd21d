"""khub rope3d (tvm-ffi build): LTX-Video 3D RoPE (diffusers semantics) over all D channels of q and k [B, S, D],
on any DLPack arrays (torch, numpy, ...), without torch. Modes as in the torch build: API (fp32 cos/sin
[B, S, D]), table (per-axis fp32 tables [P, D // 6] + int32 indices [B or 1, S, 3]), coordinates (fp32
[B or 1, S, 3] + frequencies [D // 6]), RMSNorm fused with table RoPE. The torch build's table helpers
(ltx_rope_tables) are not part of this build. Outputs are optional arguments (allocated from q's library)."""
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


def _outs(q, q_out, k_out):
    return (_empty_like(q) if q_out is None else q_out), (_empty_like(q) if k_out is None else k_out)


def apply_rotary_emb(x, cos, sin, out=None):
    out = _empty_like(x) if out is None else out
    _call("apply_rotary_emb", x, out, x, cos, sin)
    return out


def apply_rotary_emb_qk(q, k, cos, sin, q_out=None, k_out=None):
    q_out, k_out = _outs(q, q_out, k_out)
    _call("apply_rotary_emb_qk", q, q_out, k_out, q, k, cos, sin)
    return q_out, k_out


def apply_rotary_emb_table_qk(q, k, cos_table, sin_table, index, q_out=None, k_out=None):
    q_out, k_out = _outs(q, q_out, k_out)
    _call("apply_rotary_emb_table_qk", q, q_out, k_out, q, k, cos_table, sin_table, index)
    return q_out, k_out


def apply_rotary_emb_coords_qk(q, k, coords, freqs, q_out=None, k_out=None):
    q_out, k_out = _outs(q, q_out, k_out)
    _call("apply_rotary_emb_coords_qk", q, q_out, k_out, q, k, coords, freqs)
    return q_out, k_out


def rms_norm_rope_table_qk(q, k, q_weight, k_weight, eps: float, cos_table, sin_table, index, q_out=None,
                           k_out=None):
    q_out, k_out = _outs(q, q_out, k_out)
    _call("rms_norm_rope_table_qk", q, q_out, k_out, q, k, q_weight, k_weight, eps, cos_table, sin_table, index)
    return q_out, k_out


__all__ = ["apply_rotary_emb", "apply_rotary_emb_qk", "apply_rotary_emb_table_qk", "apply_rotary_emb_coords_qk",
           "rms_norm_rope_table_qk", "ops"]
