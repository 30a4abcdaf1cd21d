"""Prints the Triton code torch.compile generates for the suite's cases (TORCH_LOGS=output_code), to see
how inductor schedules a shape (block size, rows per program, warps, cache hints) where its CUDA-graph
replay is faster than khub's kernel.

--export DIR also copies each case's kernel with the config inductor chose (its .best_config names the
Triton cache entry; a kernel with a single config writes none, so then the compiled module's kernel
object says) to DIR/<op>_<shape>_<dtype>/ as kernel.cubin, kernel.ptx and launch.txt (grid, block,
shared memory, the kernel's arguments in order with the integer ones' values), so the probe can
launch inductor's own kernel on its buffers (probe --inductor DIR). Cases that compile to more than one
kernel are not exported (the probe times one launch a call).

usage: python3 compile_code.py [--export DIR] [substring of "op shape dtype" ...] 2> code.txt
"""
import argparse
import ast
import glob
import json
import math
import os
import re
import shutil
import sys
import tempfile

os.environ.setdefault("TORCH_LOGS", "output_code")


def find_cache_entry(cache_hash, name, roots):
    """The Triton cache folder named cache_hash that holds name.cubin, under any of roots (torch versions
    differ in where inductor points Triton's cache)."""
    for root in roots:
        for entry in [os.path.join(root, cache_hash)] + glob.glob(os.path.join(root, "**", cache_hash), recursive=True):
            if os.path.exists(os.path.join(entry, name + ".cubin")):
                return entry
    seen = sorted(glob.glob(os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "**", name + ".cubin"), recursive=True)
                  + glob.glob(os.path.join(os.environ["TRITON_CACHE_DIR"], "**", name + ".cubin"), recursive=True))
    raise FileNotFoundError(f"no {cache_hash}/{name}.cubin under {roots}; cubins seen: {seen[:4]}")


def kernel_source(best_config):
    """The kernel's .py beside its .best_config: the same stem up to torch 2.10; from 2.11 the
    .best_config is named by its own hash, so the one Triton kernel source in that folder."""
    same = os.path.splitext(best_config)[0] + ".py"
    if os.path.exists(same):
        return same
    kernels = [p for p in glob.glob(os.path.join(os.path.dirname(best_config), "*.py"))
               if re.search(r"^def triton_\w+\(", open(p).read(), re.M)]
    if len(kernels) != 1:
        raise FileNotFoundError(f"{len(kernels)} Triton kernel sources beside {best_config}")
    return kernels[0]


def best_config_launch(best_config, triton_cache):
    """launch_text for the kernel whose autotune result is best_config."""
    cfg = json.load(open(best_config))
    return launch_text(open(kernel_source(best_config)).read(), cfg, cfg["triton_cache_hash"],
                       [triton_cache, os.path.dirname(best_config)])


def compiled_kernels(modules):
    """The Triton kernels (inductor's autotuner objects) the compiled modules call, one per kernel name.
    Each kernel's own source is loaded as a module too, holding a second object of the same name
    (each persistent reduction had two), so an object counts only where its module's
    source runs it (`name.run(`), and objects of one name are counted once."""
    found = {}
    for m in modules:
        path = getattr(m, "__file__", None)
        src = open(path).read() if path and os.path.exists(path) else None
        for name, v in vars(m).items():
            if not (hasattr(v, "launchers") and hasattr(v, "triton_meta")):
                continue
            if src is not None and f"{name}.run(" not in src:
                continue
            found.setdefault(name, v)
    return list(found.values())


def tuner_launch(tuner, triton_cache):
    """launch_text for a compiled kernel from its one remaining launcher: covers the kernels with a
    single config (persistent reductions), which autotune nothing and write no .best_config, and
    folders holding several kernel sources. Not yet run on the GPU (written in session 16)."""
    if len(tuner.launchers) != 1:
        raise RuntimeError(f"{len(tuner.launchers)} launchers left (not autotuned?)")
    launcher = tuner.launchers[0]
    cfg = {**launcher.config.kwargs, "num_warps": launcher.config.num_warps,
           "num_stages": launcher.config.num_stages}
    return launch_text(open(tuner.filename).read(), cfg, launcher.cache_hash,
                       [triton_cache, os.path.dirname(tuner.filename)])


def launch_text(src, cfg, cache_hash, roots):
    """launch.txt's text for the Triton kernel in src run with the config cfg, and its cubin / ptx
    paths in the Triton cache entry cache_hash (found under roots)."""
    name = re.search(r"^def (triton_\w+)\(", src, re.M).group(1)
    sig = ast.literal_eval(re.search(r"'signature': (\{[^}]*\})", src).group(1))
    entry = find_cache_entry(cache_hash, name, roots)
    meta = json.load(open(os.path.join(entry, name + ".json")))
    if meta.get("global_scratch_size", 0) or meta.get("profile_scratch_size", 0):
        raise RuntimeError(f"{name} needs scratch memory")
    ints = {k: int(v) for k, v in re.findall(r"^\s+(\w+numel) = (\d+)$", src, re.M)}
    args = []
    for arg, kind in sig.items():
        if kind == "constexpr":
            continue
        args.append(arg if kind.startswith("*") else f"{arg}={ints[arg]}")
    grid = math.ceil(ints["xnumel"] / cfg.get("XBLOCK", 1))
    text = (f"name {name}\ngrid {grid}\nblock {meta['num_warps'] * 32}\nshared {meta['shared']}\n"
            f"args {' '.join(args)}\nconfig {json.dumps({k: v for k, v in cfg.items() if k.isupper() or k.startswith('num_')})}\n")
    return text, os.path.join(entry, name + ".cubin"), os.path.join(entry, name + ".ptx")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--export", help="folder for the chosen kernels (probe --inductor)")
    ap.add_argument("wanted", nargs="*")
    a = ap.parse_args()
    if a.export:
        # Fresh caches, so every case autotunes and writes its .best_config.
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="khub-inductor-")
        os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="khub-triton-")
    import torch  # noqa: E402  (after the environment above)
    from torch._inductor.codecache import PyCodeCache  # noqa: E402

    import baselines  # noqa: E402

    seen, modules_seen = set(), 0
    for op, shape, dt, _, mk, fns, comp, _khub in baselines.cases():
        name = f"{op} {shape} {baselines.DTYPE_NAMES[dt]}"
        if not comp or (a.wanted and not any(w in name for w in a.wanted)):
            continue
        print(f"==== {name}", file=sys.stderr, flush=True)
        torch._dynamo.reset()  # a fresh compile per case (dynamo's recompile limit, as in baselines.py)
        fn = torch.compile(next(iter(fns.values())), dynamic=False)
        fn(*mk())
        torch.cuda.synchronize()
        if not a.export:
            continue
        found = set(glob.glob(os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "**", "*.best_config"),
                              recursive=True))
        new = sorted(found - seen)
        seen |= found
        kernels = compiled_kernels(PyCodeCache.modules[modules_seen:])
        modules_seen = len(PyCodeCache.modules)
        tag = f"{op}_{'x'.join(map(str, shape))}_{baselines.DTYPE_NAMES[dt]}"
        # The autotune result first; the compiled module's kernel where there is none (or it fails).
        tries = ([lambda: best_config_launch(new[0], os.environ["TRITON_CACHE_DIR"])] if len(new) == 1 else []) + (
            [lambda: tuner_launch(kernels[0], os.environ["TRITON_CACHE_DIR"])] if len(kernels) == 1 else [])
        if not tries:
            print(f"export {tag}: {len(new)} autotune results and {len(kernels)} kernels, not exported", flush=True)
            continue
        for attempt in tries:
            try:
                text, cubin, ptx = attempt()
                break
            except (OSError, KeyError, AttributeError, RuntimeError) as e:
                print(f"export {tag}: {type(e).__name__}: {e}", flush=True)
        else:
            continue
        out = os.path.join(a.export, tag)
        os.makedirs(out, exist_ok=True)
        shutil.copy(cubin, os.path.join(out, "kernel.cubin"))
        shutil.copy(ptx, os.path.join(out, "kernel.ptx"))
        open(os.path.join(out, "launch.txt"), "w").write(text)
        print(f"export {tag}: {text.splitlines()[0]}, {text.splitlines()[1]}, {text.splitlines()[2]}", flush=True)


if __name__ == "__main__":
    main()
