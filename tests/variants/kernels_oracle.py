"""Answers variant questions with the installed Python `kernels` package, for khub's interop tests.

Reads one JSON request on stdin and writes one JSON answer on stdout. Request keys (all optional):
  parse:          [name, ...]                          -> [{ok, variant_str} | {ok: false, error}]
  resolve:        [{host: <host JSON>, candidates: [name, ...]}, ...]
                  -> [{accepted, trace: [{variant, accepted, reason}], trace_text}]
  select_backend: [{host: <host JSON>, backend: name}] -> [{ok, token} | {ok: false, error}]
  cuda_runtime:   true -> the CUDA version kernels reads from libcudart without torch (or null)
  torch_host:     true -> {torch, cxx11_abi, backend} as kernels sees them with torch imported
Host JSON has khub's keys: os, cpu, torch, cxx11_abi, backend, backend_version, tvm_ffi, macos.
Needs no network: only the pure resolution functions are called, with explicit host facts.
"""

import json
import sys

from packaging.version import Version

import kernels.backends as backends
import kernels.variants as variants

BACKENDS = {
    "cpu": lambda v: backends.CPU(),
    "metal": lambda v: backends.Metal(),
    "neuron": lambda v: backends.Neuron(),
    "tpu": lambda v: backends.TPU(),
    "cuda": lambda v: backends.CUDA(version=Version(v)),
    "rocm": lambda v: backends.ROCm(version=Version(v)),
    "xpu": lambda v: backends.XPU(version=Version(v)),
    "cann": lambda v: backends.CANN(version=Version(v)),
}


def version_or_none(text):
    return None if text is None else Version(text)


def backend_of(host):
    return BACKENDS[host["backend"]](host["backend_version"])


def parse_one(name):
    try:
        return {"ok": True, "variant_str": variants.parse_variant(name).variant_str}
    except ValueError as e:
        return {"ok": False, "error": str(e)}


def resolve_one(case):
    host = case["host"]
    parsed = [variants.parse_variant(name) for name in case["candidates"]]
    accepted, trace = variants._resolve_variant_for_system(
        variants=parsed,
        selected_backend=backend_of(host),
        cpu=host["cpu"],
        os=host["os"],
        torch_version=version_or_none(host["torch"]),
        torch_cxx11_abi=host["cxx11_abi"],
        tvm_ffi_version=version_or_none(host["tvm_ffi"]),
        macos_version=version_or_none(host["macos"]),
    )
    return {
        "accepted": [v.variant_str for v in accepted],
        "trace": [
            {
                "variant": d.variant.variant_str,
                "accepted": isinstance(d, variants.VariantAccepted),
                "reason": getattr(d, "reason", None),
            }
            for d in trace
        ],
        "trace_text": variants.variants_trace_str(trace),
    }


def select_backend_one(case):
    detected = backend_of(case["host"])
    original = backends._backend
    backends._backend = lambda: detected
    try:
        return {"ok": True, "token": backends._select_backend(case["backend"]).variant_str}
    except ValueError as e:
        return {"ok": False, "error": str(e)}
    finally:
        backends._backend = original


def torch_host():
    import torch

    v = Version(torch.__version__)
    return {
        "torch": f"{v.major}.{v.minor}",
        "cxx11_abi": torch.compiled_with_cxx11_abi(),
        "backend": backends._backend().variant_str,
    }


def main():
    request = json.load(sys.stdin)
    answer = {}
    if "parse" in request:
        answer["parse"] = [parse_one(n) for n in request["parse"]]
    if "resolve" in request:
        answer["resolve"] = [resolve_one(c) for c in request["resolve"]]
    if "select_backend" in request:
        answer["select_backend"] = [select_backend_one(c) for c in request["select_backend"]]
    if request.get("cuda_runtime"):
        cuda = backends._get_cuda()
        answer["cuda_runtime"] = None if cuda is None else str(cuda.version)
    if request.get("torch_host"):
        answer["torch_host"] = torch_host()
    json.dump(answer, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
