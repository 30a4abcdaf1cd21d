"""khub rmsnorm: RMSNorm, fused residual add + RMSNorm, per-head q/k norm (any last dim, 128 included)."""
from typing import Optional, Tuple

import torch

from ._ops import ops


def rms_norm(x: torch.Tensor, weight: Optional[torch.Tensor] = None, eps: float = 1e-6) -> torch.Tensor:
    """F.rms_norm numerics: fp32 math, one rounding."""
    return ops.rms_norm(x, weight, eps)


def rms_norm_rounding(
    x: torch.Tensor, weight: Optional[torch.Tensor], eps: float, rounding: str
) -> torch.Tensor:
    """rounding: "fused" (F.rms_norm), "qwen3" (Qwen3RMSNorm), "diffusers" (diffusers RMSNorm)."""
    return ops.rms_norm_rounding(x, weight, eps, rounding)


def fused_add_rms_norm(
    x: torch.Tensor, residual: torch.Tensor, weight: Optional[torch.Tensor] = None, eps: float = 1e-6
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Returns (rms_norm(x + residual), x + residual); the sum is rounded to x's dtype first."""
    return ops.fused_add_rms_norm(x, residual, weight, eps)


__all__ = ["rms_norm", "rms_norm_rounding", "fused_add_rms_norm"]
