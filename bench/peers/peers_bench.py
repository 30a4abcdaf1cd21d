"""khub's ops beside the kernels a user would install instead: QuACK (CuTe-DSL), Liger-Kernel (Triton),
FlashInfer and PyTorch, in one process on one GPU, with the method of bench/kernels/baselines.py
(its bench(): CUDA events, a GPU sleep ahead of each cold call, input sets rotated past 4x L2 (at most
512 sets), median of 100; graph = 20 calls captured, median of 15 replays). khub is timed three times: the
plain torch build (torch2XX-cxx11-cuXXX), the stable-ABI build (torch-stable-abiXXX-cuXXX) and the tvm-ffi
build (tvm-ffi01-cuXXX, torch tensors passed through DLPack, outputs allocated by its package). Every
implementation's output is first checked against an fp32 reference (max abs / rel error in the JSON);
a device copy of the same bytes is timed in the same run; host_us is the host's time per call of 200
calls issued back to back (no sync), the cost of the Python-to-launch path. Writes JSON with its
provenance (bench/record.py), by default bench/results/<machine>_peers.json.

usage: peers_bench.py [--variants kernels] [--site DIR] [--passes 2] [--ops a,b] [--groups ops.md,decode]
       peers_bench.py --warm-only --site DIR   # first calls of each peer (JIT builds) without khub
       peers_bench.py --self-test [--variants kernels]  # CPU: cases, references, arrangements, khub's CPU builds
"""
import argparse
import os
import site
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "kernels"))

import torch  # noqa: E402

import cases as C  # noqa: E402
import impls as I  # noqa: E402

COPY = "copy"
HOST_CALLS = 200


def load_khub_flavours(root, device="cu1"):
    """{flavour: impls} for khub's builds of `device` ("cu1": CUDA, "cpu") under root/<kernel>/build/,
    and each flavour's status (the reason when it did not load)."""
    from baselines import load_khub, load_khub_ffi
    flavours = {I.KHUB: (load_khub, f"torch2*-cxx11-{device}*"),
                I.KHUB_STABLE: (load_khub, f"torch-stable-abi*-{device}*"),
                I.KHUB_TVM_FFI: (load_khub_ffi, f"tvm-ffi01-{device}*")}
    loaded, status = {}, {}
    for name, (load, pattern) in flavours.items():
        try:
            ops = load(root, pattern)
            if not ops:
                raise RuntimeError(f"no {pattern} variant under {root}/*/build (build them: bench/peers/README.md)")
            loaded[name] = I.khub_impls(ops)
            status[name] = {"status": "ok", "variants": pattern, "kernels": sorted(ops)}
        except Exception as e:  # noqa: BLE001
            status[name] = {"status": "unavailable", "variants": pattern,
                            "reason": traceback.format_exception_only(type(e), e)[-1].strip()}
    return loaded, status


def check(case, arrange, call, device="cuda"):
    """Max abs and rel error of the first output against the fp32 reference, on fresh inputs."""
    inputs = case.make(device)
    ref = case.reference(inputs)
    out = call(*arrange(inputs)).float().reshape(ref.shape)
    err = (out - ref).abs().max().item()
    scale = ref.abs().max().item()
    # bf16 keeps 8 bits: a few units in the last place of the largest value, plus the inputs' rounding.
    return {"max_abs_err": err, "max_rel_err": err / max(scale, 1e-30), "ok": bool(err <= scale * 2 ** -6)}


def host_time(make):
    fn = make()
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(HOST_CALLS):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / HOST_CALLS * 1e6


def copy_impl(case):
    """A device copy of the case's bytes: read nbytes/2, write nbytes/2."""
    n = case.nbytes // 2
    return lambda i: (torch.empty(n, dtype=torch.uint8, device="cuda").random_(0, 255),
                      torch.empty(n, dtype=torch.uint8, device="cuda")), lambda s, d: d.copy_(s)


def implementations(case, khub, peers, torch_impls):
    todo = {}
    for name, table in list(khub.items()) + list(peers.items()) + [(I.TORCH, torch_impls)]:
        if case.op in table:
            todo[name] = table[case.op]
    todo[COPY] = copy_impl(case)
    return todo


def run_case(case, todo, passes, doc, log):
    from baselines import bench
    for name, (arrange, call) in todo.items():
        row = {"op": case.op, "shape": case.shape, "group": case.group, "dtype": "bfloat16", "impl": name,
               "bytes": case.nbytes}
        if name != COPY:
            try:
                chk = check(case, arrange, call)
            except Exception as e:  # noqa: BLE001
                doc["failures"].append({**row, "stage": "check", "error": traceback.format_exception_only(type(e), e)[-1].strip()})
                log(f"{case.op:20s} {str(case.shape):20s} {name:16s} check failed: {doc['failures'][-1]['error']}")
                continue
            doc["checks"].append({**row, **chk})
            if not chk["ok"]:
                log(f"{case.op:20s} {str(case.shape):20s} {name:16s} WRONG: max abs err {chk['max_abs_err']:.4g}")

        def make(arrange=arrange, call=call):
            args = arrange(case.make("cuda")) if name != COPY else arrange(None)
            return lambda: call(*args)
        for p in range(1, passes + 1):
            try:
                r = bench(make, case.nbytes)
                r["host_us"] = host_time(make)
            except Exception as e:  # noqa: BLE001
                doc["failures"].append({**row, "stage": f"time, pass {p}",
                                        "error": traceback.format_exception_only(type(e), e)[-1].strip()})
                log(f"{case.op:20s} {str(case.shape):20s} {name:16s} timing failed: {doc['failures'][-1]['error']}")
                break
            doc["results"].append({**row, "pass": p, **r})
            log(f"{case.op:20s} {str(case.shape):20s} {name:16s} pass {p} cold {r['cold_us']:8.2f} "
                f"graph {r['graph_us']:8.2f} host {r['host_us']:6.1f}")
    torch.cuda.empty_cache()


def suite(groups, ops):
    from baselines import cases as baseline_cases
    out = []  # decode rows first: a run cut off by the time limit keeps them
    if "decode" in groups:
        out += C.decode_cases()
    if "ops.md" in groups:
        out += C.opsmd_cases(baseline_cases())
    return [c for c in out if not ops or c.op in ops]


def warm(peers, log):
    """One small call of each peer op: FlashInfer's JIT modules and the DSL compilers' disk caches."""
    for case in [C.rms_case((4, 2048), "decode"), C.fused_add_case((4, 2048), "decode"),
                 C.geglu_case((4, 4096), "none"), C.geglu_case((4, 4096), "tanh")]:
        for peer, table in peers.items():
            if case.op in table:
                t0 = time.time()
                try:
                    chk = check(case, *table[case.op])
                    log(f"warm {peer} {case.op}: {time.time() - t0:.1f} s, max abs err {chk['max_abs_err']:.3g}")
                except Exception as e:  # noqa: BLE001
                    log(f"warm {peer} {case.op}: failed after {time.time() - t0:.1f} s: {e!r}"[:400])


def self_test(variants):
    """CPU only: every case builds (rows cut to 4 where large), the PyTorch implementation matches the
    fp32 reference, the peers' arrangements (FlashInfer's gate-first order, Liger's separate
    halves) give the same math when the peer's formula is written in PyTorch, and each khub flavour's
    calls (torch, stable-ABI, tvm-ffi) give it on khub's CPU builds under `variants`."""
    import math
    import types
    import torch.nn.functional as F
    # baselines.py reads the L2 size at import; its case list itself needs no GPU.
    torch.cuda.get_device_properties = lambda *_: types.SimpleNamespace(L2_cache_size=60 << 20)
    from baselines import cases as baseline_cases
    cs = C.opsmd_cases(baseline_cases()) + C.decode_cases()
    assert len({(c.op, tuple(c.shape)) for c in cs}) == len(cs), "duplicate case"

    def smaller(c):
        shape = (4,) + tuple(c.shape[-2:] if c.op == "qk_norm" else c.shape[-1:])
        if c.op in ("rms_norm", "qk_norm"):
            return C.rms_case(shape, "decode")
        if c.op == "fused_add_rms_norm":
            return C.fused_add_case(shape, "decode")
        if c.op == "gelu_tanh":
            return C.gelu_tanh_case(shape)
        return C.geglu_case(shape, "tanh" if c.op == "geglu_tanh" else "none")
    emulated = {  # the peers' formulas, in PyTorch, over their arranged inputs
        ("FlashInfer", "geglu_erf"): (I.gate_first, lambda x: F.gelu(x.chunk(2, -1)[0]) * x.chunk(2, -1)[1]),
        ("FlashInfer", "geglu_tanh"): (I.gate_first, lambda x: F.gelu(x.chunk(2, -1)[0], approximate="tanh")
                                       * x.chunk(2, -1)[1]),
        ("Liger", "geglu_tanh"): (lambda i: (I.halves(i["x"])[1].contiguous(), I.halves(i["x"])[0].contiguous()),
                                  lambda a, b: F.gelu(a, approximate="tanh") * b),
    }
    khub, khub_status = load_khub_flavours(variants, device="cpu")
    missing = [f"{name}: {st['reason']}" for name, st in khub_status.items() if st["status"] != "ok"]
    if missing:
        sys.exit("self-test: khub's CPU builds did not load (scripts/setup builds them): " + "; ".join(missing))
    torch_impls, n = I.torch_impls(), 0
    for c in cs:
        small = smaller(c) if math.prod(c.shape) > 2 ** 20 else c
        for name, (arrange, call) in [(I.TORCH, torch_impls[c.op])] + [
                (peer, emulated[(peer, c.op)]) for peer in I.PEERS if (peer, c.op) in emulated] + [
                (flavour, table[c.op]) for flavour, table in khub.items() if c.op in table]:
            chk = check(small, arrange, call, device="cpu")
            assert chk["ok"], (c.op, c.shape, name, chk)
            n += 1
    ops = sorted({c.op for c in cs})
    print(f"self-test: {len(cs)} cases ({', '.join(ops)}), {n} checks against the fp32 reference passed (CPU; "
          f"khub flavours: {', '.join(khub)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="default: bench/results/<machine>_peers.json")
    ap.add_argument("--variants", default="kernels", help="folder holding <kernel>/build/<variant>/")
    ap.add_argument("--site", help="folder the peer packages were unpacked into (bench/peers/README.md)")
    ap.add_argument("--passes", type=int, default=2, help="timed passes over every implementation (default 2)")
    ap.add_argument("--groups", default="ops.md,decode")
    ap.add_argument("--ops", default="", help="comma-separated op names (default: all)")
    ap.add_argument("--commit", help="khub source commit (default: $KHUB_COMMIT, else git HEAD)")
    ap.add_argument("--warm-only", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test(a.variants)
    if not torch.cuda.is_available():
        sys.exit("peers_bench.py: no CUDA device (torch.cuda.is_available() is False); it times GPU kernels and "
                 "runs on the H200 machine (bench/peers/README.md). --self-test checks the cases on the CPU.")
    if a.site:
        site.addsitedir(os.path.abspath(a.site))  # runs the packages' .pth files (CuTe-DSL's path)
    log = lambda s: print(s, flush=True)  # noqa: E731
    peers, peer_status = I.load_peers()
    for peer, st in peer_status.items():
        log(f"{peer}: {st}")
    if a.warm_only:
        return warm(peers, log)
    from baselines import env, stats, time_events
    from record import RESULTS, dump, machine_label, provenance, source_commit
    khub, khub_status = load_khub_flavours(a.variants)
    for name, st in khub_status.items():
        log(f"{name}: {st}")
    doc = {"harness": "bench/peers/peers_bench.py", "commit": source_commit(a.commit), **env(),
           "method": {"cold": "median of 100 calls, GPU sleep ahead of each, input sets rotated past 4x L2 (at most 512)",
                      "graph": "20 calls in one CUDA graph, median of 15 replays, per call",
                      "host": f"host time per call of {HOST_CALLS} calls issued without sync", "passes": a.passes},
           "implementations": {**khub_status, **peer_status, I.TORCH: {"version": torch.__version__, "status": "ok"}},
           "not_offered": [{"peer": p, "op": op, "why": why} for (p, op), why in I.NOT_OFFERED.items()]
           + [{"peer": "all", "op": op, "why": why} for op, why in C.NO_PEER.items()],
           "checks": [], "failures": [], "results": []}
    src = torch.empty(1 << 30, device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    c = stats(time_events(20, False, lambda i: dst.copy_(src)))
    doc["copy_1gib_us"], doc["copy_tbps"] = c[0], 2 * (1 << 30) / c[0] / 1e6
    del src, dst
    log(f"{doc['gpu']} torch {doc['torch']}; copy 1 GiB {c[0]:.1f} us = {doc['copy_tbps']:.2f} TB/s")
    torch_impls = I.torch_impls()
    todo = suite(set(a.groups.split(",")), set(filter(None, a.ops.split(","))))
    out = a.out or RESULTS / f"{machine_label(doc['gpu'])}_peers.json"
    t0 = time.time()
    for k, case in enumerate(todo):
        run_case(case, implementations(case, khub, peers, torch_impls), a.passes, doc, log)
        # Written after every case, so a run cut off by the device's time limit keeps what it measured.
        doc["complete"] = k + 1 == len(todo)
        doc["provenance"] = provenance(doc["commit"], gpu=doc["gpu"], harness="bench/peers/peers_bench.py")
        dump(doc, out)
    log(f"{len(todo)} cases in {time.time() - t0:.0f} s; {len(doc['failures'])} failures")


if __name__ == "__main__":
    main()
