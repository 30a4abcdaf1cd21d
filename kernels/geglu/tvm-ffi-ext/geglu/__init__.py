"""khub geglu (tvm-ffi build): diffusers GEGLU (value = first half, gate = second half) and GELU-tanh on any
DLPack arrays (torch, numpy, ...), without torch; fp32 math, one rounding. Each function takes an optional
`out` (allocated from x's own library when absent) and calls `<op>_cpu` or `<op>_cuda` by the device of x."""
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


def geglu(x, approximate: bool = False, out=None):
    """x[..., :H] * gelu(x[..., H:]); exact erf GELU unless approximate (tanh)."""
    out = _empty_like(x[..., : x.shape[-1] // 2]) if out is None else out
    _call("geglu", x, out, x, approximate)
    return out


def gelu_tanh(x, out=None):
    """F.gelu(x, approximate="tanh")."""
    out = _empty_like(x) if out is None else out
    _call("gelu_tanh", x, out, x)
    return out


__all__ = ["geglu", "gelu_tanh", "ops"]
