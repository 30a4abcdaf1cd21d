"""khub geglu: diffusers GEGLU (value = first half, gate = second half) and GELU-tanh; fp32 math, one rounding."""
import torch

from ._ops import ops


def geglu(x: torch.Tensor, approximate: bool = False) -> torch.Tensor:
    """x[..., :H] * gelu(x[..., H:]); exact erf GELU unless approximate (tanh)."""
    return ops.geglu(x, approximate)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """F.gelu(x, approximate="tanh")."""
    return ops.gelu_tanh(x)


__all__ = ["geglu", "gelu_tanh"]
