"""khub rmsnorm (tvm-ffi build): RMSNorm and fused residual add + RMSNorm on any DLPack arrays (torch, numpy,
JAX, CuPy, ...), without torch. Each function takes an optional `out` (allocated like x when absent) and
calls the module's `<op>_cpu` or `<op>_cuda` by the device of x, as kernel-builder's tvm-ffi examples do."""
import sys

import tvm_ffi

from ._ops import ops


def _empty_like(x):
    """A new array like x from x's own library (torch.empty_like, numpy.empty_like, ...)."""
    lib = sys.modules[type(x).__module__.split(".")[0]]
    return lib.empty_like(x)


def _call(name, x, *args):
    device = tvm_ffi.from_dlpack(x).device.type
    fn = getattr(ops, f"{name}_{device}", None)
    if fn is None:
        raise NotImplementedError(f"{name}: no implementation for device type {device}")
    # Arrays go in as they are: tvm-ffi converts them through DLPack and, for torch CUDA tensors, runs the
    # call on torch's current stream.
    fn(*args)


def rms_norm(x, weight=None, eps: float = 1e-6, out=None):
    """F.rms_norm numerics: fp32 math, one rounding."""
    out = _empty_like(x) if out is None else out
    _call("rms_norm", x, out, x, weight, eps)
    return out


def rms_norm_rounding(x, weight, eps: float, rounding: str, out=None):
    """rounding: "fused" (F.rms_norm), "qwen3" (Qwen3RMSNorm), "diffusers" (diffusers RMSNorm)."""
    out = _empty_like(x) if out is None else out
    _call("rms_norm_rounding", x, out, x, weight, eps, rounding)
    return out


def fused_add_rms_norm(x, residual, weight=None, eps: float = 1e-6, out=None, residual_out=None):
    """Returns (rms_norm(x + residual), x + residual); the sum is rounded to x's dtype first."""
    out = _empty_like(x) if out is None else out
    residual_out = _empty_like(x) if residual_out is None else residual_out
    _call("fused_add_rms_norm", x, out, residual_out, x, residual, weight, eps)
    return out, residual_out


__all__ = ["rms_norm", "rms_norm_rounding", "fused_add_rms_norm", "ops"]
