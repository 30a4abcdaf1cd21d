"""The implementations timed side by side. Each one, per op, is arrange(inputs) -> args (done before
timing: a peer's own arrangement of the same math, e.g. FlashInfer's GELU on the first half, Liger's
separate tensors) and call(*args) -> the first output. A peer that cannot be imported is kept with
the reason, which the JSON and the table show; an op a peer does not offer is listed in NOT_OFFERED."""
import importlib.metadata
import traceback

import torch
import torch.nn.functional as F

from cases import EPS

KHUB, KHUB_STABLE, KHUB_TVM_FFI = "khub", "khub stable-abi", "khub tvm-ffi"
PEERS = ("QuACK", "Liger", "FlashInfer")
TORCH = "PyTorch"

NOT_OFFERED = {
    ("Liger", "geglu_erf"): "Liger's GEGLU is the tanh approximation only",
    ("QuACK", "geglu_erf"): "QuACK has GEGLU only as a GEMM epilogue, no standalone op",
    ("QuACK", "geglu_tanh"): "QuACK has GEGLU only as a GEMM epilogue, no standalone op",
    ("QuACK", "gelu_tanh"): "no standalone GELU op",
    ("Liger", "gelu_tanh"): "no standalone GELU op",
    ("FlashInfer", "gelu_tanh"): "no standalone GELU op (only gelu_tanh_and_mul)",
}


def flat(t):
    """Rows of the last dim: QuACK and FlashInfer take 2-D inputs."""
    return t.reshape(-1, t.shape[-1])


def halves(x):
    h, g = x.chunk(2, dim=-1)
    return h, g


def gate_first(inputs):
    """FlashInfer applies the GELU to the first half: the same math as khub's h * gelu(g) takes [g, h]."""
    h, g = halves(inputs["x"])
    return (torch.cat([g, h], dim=-1),)


def ident(*names):
    return lambda i: tuple(i[n] for n in names)


def khub_impls(ops):
    """ops: {kernel name: torch.ops namespace} (baselines.load_khub), or {kernel name: tvm-ffi package}
    (baselines.load_khub_ffi), whose functions take the same arguments."""
    rms, geglu = ops.get("rmsnorm"), ops.get("geglu")
    out = {}
    if rms is not None:
        norm = (ident("x", "w"), lambda x, w: rms.rms_norm(x, w, EPS))
        out.update({"rms_norm": norm, "qk_norm": norm,
                    "fused_add_rms_norm": (ident("x", "r", "w"), lambda x, r, w: rms.fused_add_rms_norm(x, r, w, EPS)[0])})
    if geglu is not None:
        out.update({"geglu_erf": (ident("x"), lambda x: geglu.geglu(x, False)),
                    "geglu_tanh": (ident("x"), lambda x: geglu.geglu(x, True)),
                    "gelu_tanh": (ident("x"), lambda x: geglu.gelu_tanh(x))})
    return out


def torch_impls():
    def fused(x, r, w):
        s = x + r
        return F.rms_norm(s, (s.shape[-1],), w, EPS)

    def geglu(approximate):
        def fn(x):
            h, g = halves(x)
            return h * F.gelu(g, approximate=approximate)
        return fn
    norm = (ident("x", "w"), lambda x, w: F.rms_norm(x, (x.shape[-1],), w, EPS))
    return {"rms_norm": norm, "qk_norm": norm, "fused_add_rms_norm": (ident("x", "r", "w"), fused),
            "geglu_erf": (ident("x"), geglu("none")), "geglu_tanh": (ident("x"), geglu("tanh")),
            "gelu_tanh": (ident("x"), lambda x: F.gelu(x, approximate="tanh"))}


def quack_impls():
    from quack.rmsnorm import rmsnorm_fwd
    norm = (lambda i: (flat(i["x"]), i["w"]), lambda x, w: rmsnorm_fwd(x, w, eps=EPS)[0])
    return {"rms_norm": norm, "qk_norm": norm,
            "fused_add_rms_norm": (lambda i: (flat(i["x"]), flat(i["r"]), i["w"]),
                                   lambda x, r, w: rmsnorm_fwd(x, w, residual=r, eps=EPS)[0])}


def liger_impls():
    from liger_kernel.ops.fused_add_rms_norm import fused_add_rms_norm_forward
    from liger_kernel.ops.geglu import geglu_forward
    from liger_kernel.ops.rms_norm import rms_norm_forward
    norm = (ident("x", "w"), lambda x, w: rms_norm_forward(x, w, EPS, 0.0, "llama", None)[0])

    def separate(i):  # gelu(a) * b over two contiguous tensors: a = gate, b = value
        h, g = halves(i["x"])
        return g.contiguous(), h.contiguous()
    return {"rms_norm": norm, "qk_norm": norm,
            "fused_add_rms_norm": (ident("x", "r", "w"),
                                   lambda x, r, w: fused_add_rms_norm_forward(x, r, w, EPS, 0.0, "llama")[0]),
            "geglu_tanh": (separate, lambda a, b: geglu_forward(a, b)[2])}


def flashinfer_impls():
    import flashinfer

    def fused(x, r, w):  # in place: r += x; x = rmsnorm(r)
        flashinfer.norm.fused_add_rmsnorm(x, r, w, EPS)
        return x
    norm = (lambda i: (flat(i["x"]), i["w"]), lambda x, w: flashinfer.norm.rmsnorm(x, w, EPS))
    return {"rms_norm": norm, "qk_norm": norm,
            "fused_add_rms_norm": (lambda i: (flat(i["x"]).clone(), flat(i["r"]).clone(), i["w"]), fused),
            "geglu_erf": (gate_first, flashinfer.activation.gelu_and_mul),
            "geglu_tanh": (gate_first, flashinfer.activation.gelu_tanh_and_mul)}


DISTRIBUTIONS = {"QuACK": "quack-kernels", "Liger": "liger-kernel", "FlashInfer": "flashinfer-python"}
LOADERS = {"QuACK": quack_impls, "Liger": liger_impls, "FlashInfer": flashinfer_impls}


def load_peers():
    """{peer: impls} for the peers that import, and {peer: {version, status, reason}} for all."""
    impls, status = {}, {}
    for peer, loader in LOADERS.items():
        try:
            version = importlib.metadata.version(DISTRIBUTIONS[peer])
        except importlib.metadata.PackageNotFoundError:
            version = None
        try:
            impls[peer] = loader()
            status[peer] = {"version": version, "status": "ok"}
        except Exception as e:  # noqa: BLE001 - any import failure is recorded, not raised
            last = traceback.format_exception_only(type(e), e)[-1].strip()
            status[peer] = {"version": version, "status": "unavailable",
                            "reason": f"import failed: {last}" if version else
                            f"not installed ({DISTRIBUTIONS[peer]}; bench/peers/README.md): {last}"}
    return impls, status
