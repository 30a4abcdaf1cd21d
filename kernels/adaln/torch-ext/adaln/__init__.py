"""khub adaln: LTX-Video AdaLN, y = rms_norm(x, eps) * (1 + scale) + shift (no weight), fp32 math, one rounding.

Table form: shift = table[c] + temb[..., c*D:(c+1)*D], scale = chunk c + 1 (LTX: shift_msa = 0, shift_mlp = 3).
Gated residual: h_new = h + gate * delta, then AdaLN of h_new; returns (y, h_new).
"""
import torch

from ._ops import ops


def adaln_rms(x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return ops.adaln_rms(x, scale, shift, eps)


def adaln_rms_table(x: torch.Tensor, table: torch.Tensor, temb: torch.Tensor, shift_chunk: int,
                    eps: float = 1e-6) -> torch.Tensor:
    return ops.adaln_rms_table(x, table, temb, shift_chunk, eps)


def gated_residual_adaln_rms(h, delta, gate, scale, shift, eps: float = 1e-6):
    return ops.gated_residual_adaln_rms(h, delta, gate, scale, shift, eps)


def gated_residual_adaln_rms_table(h, delta, table, temb, gate_chunk: int, shift_chunk: int, eps: float = 1e-6):
    return ops.gated_residual_adaln_rms_table(h, delta, table, temb, gate_chunk, shift_chunk, eps)


__all__ = ["adaln_rms", "adaln_rms_table", "gated_residual_adaln_rms", "gated_residual_adaln_rms_table"]
