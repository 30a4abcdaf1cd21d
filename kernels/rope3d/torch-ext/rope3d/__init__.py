"""khub rope3d: LTX-Video 3D RoPE (diffusers semantics) over all D channels of q and k [B, S, D].

Modes: API (fp32 cos/sin [B, S, D] as diffusers' LTXVideoRotaryPosEmbed returns them), table
(per-axis fp32 tables [P, D // 6] + int32 per-token indices [B or 1, S, 3]), coordinates (fp32
[B or 1, S, 3] + frequencies [D // 6]), and RMSNorm fused with table RoPE.
"""
import math
from typing import Optional, Tuple

import torch

from ._ops import ops


def apply_rotary_emb(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    return ops.apply_rotary_emb(x, cos, sin)


def apply_rotary_emb_qk(q, k, cos, sin) -> Tuple[torch.Tensor, torch.Tensor]:
    return ops.apply_rotary_emb_qk(q, k, cos, sin)


def apply_rotary_emb_table_qk(q, k, cos_table, sin_table, index) -> Tuple[torch.Tensor, torch.Tensor]:
    return ops.apply_rotary_emb_table_qk(q, k, cos_table, sin_table, index)


def apply_rotary_emb_coords_qk(q, k, coords, freqs) -> Tuple[torch.Tensor, torch.Tensor]:
    return ops.apply_rotary_emb_coords_qk(q, k, coords, freqs)


def rms_norm_rope_table_qk(q, k, q_weight: Optional[torch.Tensor], k_weight: Optional[torch.Tensor], eps: float,
                           cos_table, sin_table, index) -> Tuple[torch.Tensor, torch.Tensor]:
    return ops.rms_norm_rope_table_qk(q, k, q_weight, k_weight, eps, cos_table, sin_table, index)


def ltx_video_tables(frames: int, height: int, width: int, dim: int = 2048, theta: float = 10000.0,
                     scale=(8 / 25, 32, 32), patch=(1, 1), base=(20, 2048, 2048), device=None):
    """Tables and index for the regular LTX grid (diffusers' _prepare_video_coords arithmetic).

    Returns (cos_table, sin_table, index) with index [1, frames*height*width, 3] (frame-major).
    """
    f = torch.arange(frames, dtype=torch.float32, device=device) * scale[0] * patch[1] / base[0]
    h = torch.arange(height, dtype=torch.float32, device=device) * scale[1] * patch[0] / base[1]
    w = torch.arange(width, dtype=torch.float32, device=device) * scale[2] * patch[0] / base[2]
    cos_t, sin_t = ops.ltx_rope_tables(torch.cat([f, h, w]), dim, theta)
    fi, hi, wi = torch.meshgrid(torch.arange(frames), torch.arange(height) + frames,
                                torch.arange(width) + frames + height, indexing="ij")
    index = torch.stack([fi, hi, wi], dim=-1).reshape(1, -1, 3).to(torch.int32).to(cos_t.device)
    return cos_t, sin_t, index


def ltx_rope_freqs(dim: int = 2048, theta: float = 10000.0, device=None) -> torch.Tensor:
    """The D // 6 frequencies of coordinate mode (theta ** linspace(0, 1) * pi / 2, fp32)."""
    freqs = theta ** torch.linspace(math.log(1.0, theta), math.log(theta, theta), dim // 6,
                                    device=device, dtype=torch.float32)
    return freqs * math.pi / 2.0


__all__ = ["apply_rotary_emb", "apply_rotary_emb_qk", "apply_rotary_emb_table_qk", "apply_rotary_emb_coords_qk",
           "rms_norm_rope_table_qk", "ltx_video_tables", "ltx_rope_freqs"]
