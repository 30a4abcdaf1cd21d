"""Renders docs/benchmarks.md from the current result files in bench/results/ (one per harness and
machine, each with its provenance: commit, date, machine). Standard library only.

  python3 bench/render_docs.py > docs/benchmarks.md
"""
import json
import math
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
DTYPE = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
SAME = "khub (same process)"  # baselines.py's name for khub's ops timed next to PyTorch
BASELINE = {"eager_hf": "eager", "eager_diffusers": "eager", "eager": "eager", "F.rms_norm": "F.rms_norm",
            "torch.compile": "compile"}


def load(name):
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def source(name, doc):
    p = doc["provenance"]
    return f"`bench/results/{name}` (commit {p['commit']}, {p['date'][:10]})"


def shape(v):
    """[2, 2688, 2048, "x2"] or "[2,2688,2048]x2" -> [2,2688,2048]x2."""
    if isinstance(v, str):
        return v
    dims = [str(d) for d in v if d != "x2"]
    return "[" + ",".join(dims) + "]" + ("x2" if "x2" in v else "")


def case(r):
    return r["op"], shape(r["shape"]), r.get("dtype", "bfloat16")


def kernels_section(out):
    kh, bl = load("h200_kernels.json"), load("h200_baselines.json")
    if not kh or not bl:
        return
    base = {}
    for r in bl["results"]:
        base.setdefault(case(r), {})[r["baseline"]] = r
    updates = ", ".join(u["commit"] for u in bl["provenance"].get("updates", []))
    out += ["## Kernels on the H200", "",
            f"{kh['gpu']}, torch {bl['torch']} (CUDA {bl['cuda']}); a 1 GiB device copy runs at "
            f"{kh['copy_tbps']:.2f} TB/s. khub from {source('h200_kernels.json', kh)}, PyTorch from "
            f"{source('h200_baselines.json', bl)}" + (f"; some cases rerun at {updates}" if updates else "") + ".",
            "Times in µs (median). Speed-up = PyTorch / khub, both timed in the baselines' process: cold against "
            "the fastest PyTorch version, graph against torch.compile.", "",
            "![khub kernels on the H200](../bench/results/kernels_h200.png)", "",
            "| op | shape | dtype | khub cold | khub graph | % of copy | fastest PyTorch, cold | compile, graph "
            "| speed-up cold | speed-up graph |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    sweep = []
    for r in kh["results"]:
        b = dict(base.get(case(r), {}))
        same = b.pop(SAME, None)
        best = min(b.items(), key=lambda kv: kv[1]["cold_us"], default=None)
        comp = b.get("torch.compile")
        pct = 100 * r["cold_tbps"] / kh["copy_tbps"]
        if r["op"] == "rms_norm" and not comp and best and same:  # the shape sweep: no compiled baseline
            sweep.append((shape(r["shape"]), best[1]["cold_us"] / same["cold_us"], pct))
            continue
        cells = [r["op"], shape(r["shape"]), DTYPE[r.get("dtype", "bfloat16")], f"{r['cold_us']:.1f}",
                 f"{r['graph_us']:.1f}", f"{pct:.0f}"]
        cells.append(f"{best[1]['cold_us']:.1f} ({BASELINE.get(best[0], best[0])})" if best else "–")
        cells.append(f"{comp['graph_us']:.1f}" if comp else "–")
        cells.append(f"{best[1]['cold_us'] / same['cold_us']:.2f}×" if best and same else "–")
        cells.append(f"{comp['graph_us'] / same['graph_us']:.2f}×" if comp and same else "–")
        out.append("| " + " | ".join(cells) + " |")
    if sweep:
        speed = [v for _, v, _ in sweep]
        out += ["", f"RMSNorm (bf16) at {len(sweep)} more shapes, timed against eager and `F.rms_norm` only "
                f"({', '.join(s for s, _, _ in sweep)}): khub {min(speed):.2f}–{max(speed):.2f}× faster cold (every row "
                "is in the JSON)."]
    if kh.get("host_breakdown_us"):
        out += ["", "Host time of one call from C++ (`kernels_bench --host-breakdown`, µs a call, median of 9 loops "
                "of 200 calls issued without a sync): the op through the dispatcher's typed handle, as "
                "`khub::Op::typed<…>().call(…)` calls it, beside its pieces and bare CUDA launches.", "",
                "| call | host µs |", "|---|---|"]
        # The whole call first, then the op without allocation and launch, then the pieces.
        order = lambda kv: (not kv[0].startswith("rms_norm [1"), not kv[0].startswith("rms_norm"))  # noqa: E731
        out += [f"| {name} | {us:.2f} |" for name, us in sorted(kh["host_breakdown_us"].items(), key=order)]
    out.append("")


PEER_ORDER = ("khub", "khub stable-abi", "khub tvm-ffi", "QuACK", "Liger", "FlashInfer", "PyTorch")
# FlashInfer's fused add + RMSNorm overwrites its inputs; the others write new outputs. In a graph the
# 20 calls share one input set, so its writes land in the same buffers, which stay in L2 (60 MB) while
# they fit, and the others' 20 new outputs do not: its graph time there is not the kernel's alone.
IN_PLACE = {("FlashInfer", "fused_add_rms_norm"): ", in place †"}


def _mean(rows, key):
    return sum(r[key] for r in rows) / len(rows) if rows else None


def _ratio_cell(peer_rows, khub_rows, key):
    """Best peer / khub per pass ("1.02 / 0.99"), ≥ 1 when khub is faster."""
    pairs = [(p[key], k[key]) for p, k in zip(peer_rows, khub_rows)]
    return " / ".join(f"{p / k:.2f}" for p, k in pairs) if pairs else "–"


def peers_section(out):
    pr = load("h200_peers.json")
    if not pr:
        return
    impl = pr["implementations"]
    ok = {(c["op"], shape(c["shape"]), c["impl"]) for c in pr["checks"] if c["ok"]}
    rows = {}
    for r in pr["results"]:
        rows.setdefault((r["op"], shape(r["shape"]), r["group"]), {}).setdefault(r["impl"], []).append(r)
    versions = "; ".join(f"{n} {v.get('version') or ''}".strip() + ("" if v["status"] == "ok" else
                         f" **not measured: {v['reason']}**") for n, v in impl.items() if not n.startswith("khub"))
    khub_note = "; ".join(f"{n} = `{v['variants']}`" + ("" if v["status"] == "ok" else f" **not measured: {v['reason']}**")
                          for n, v in impl.items() if n.startswith("khub"))
    out += ["## khub beside the peer kernels (H200)", "",
            f"`bench/peers/peers_bench.py`, {source('h200_peers.json', pr)}: khub's ops next to the kernels a user "
            f"would install instead, one process, {pr['method']['passes']} timed passes. {pr['gpu']}, torch "
            f"{pr['torch']} (CUDA {pr['cuda']}); 1 GiB copy {pr['copy_tbps']:.2f} TB/s. Peers: {versions}. "
            f"khub builds: {khub_note}."
            + ("" if pr.get("complete", True) else " **The run was cut off: rows after the last case are missing.**"),
            "",
            "Times in µs (bf16), mean of the passes; *peer / khub* is the best peer's time over khub's for each pass "
            "(≥ 1: khub faster). The best peer is the fastest of QuACK, Liger, FlashInfer and PyTorch whose output "
            "passed the fp32 check; copy = a device copy of the same bytes, same run; stable = khub's stable-ABI "
            "build. Decode rows: at most 256 rows.", "",
            *(["![best peer / khub on the H200](../bench/results/peers_h200.png)", ""]
              if (RESULTS / "peers_h200.png").exists() else []),
            "| op | shape | khub cold | stable cold | best peer cold | peer / khub | khub graph | stable graph "
            "| best peer graph | peer / khub | copy cold |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    # khub's other builds (stable-ABI, tvm-ffi) against the plain one: {flavour: {key: [ratio per row]}}
    flavour_ratio = {n: {"cold_us": [], "graph_us": []} for n in impl if n.startswith("khub") and n != "khub"}
    lead = {"cold_us": [0, 0], "graph_us": [0, 0]}  # rows where khub is ahead in every pass, rows compared
    for (op, shp, group), by in rows.items():
        kh, st, cp = by.get("khub", []), by.get("khub stable-abi", []), by.get("copy", [])
        cells = [op, shp + (" (decode)" if group == "decode" else "")]
        for key in ("cold_us", "graph_us"):
            peers = {n: v for n, v in by.items() if not n.startswith("khub") and n != "copy" and (op, shp, n) in ok}
            best = min(peers.items(), key=lambda kv: _mean(kv[1], key), default=None)
            cells += [f"{_mean(kh, key):.2f}" if kh else "–", f"{_mean(st, key):.2f}" if st else "–",
                      f"{_mean(best[1], key):.2f} ({best[0]}{IN_PLACE.get((best[0], op), '') if key == 'graph_us' else ''})"
                      if best else "–",
                      _ratio_cell(best[1], kh, key) if best and kh else "–"]
            if best and kh:
                lead[key][0] += all(p[key] >= k[key] for p, k in zip(best[1], kh))
                lead[key][1] += 1
            for n, ratios in flavour_ratio.items():
                if kh and by.get(n):
                    ratios[key].append(_mean(by[n], key) / _mean(kh, key))
        cells.append(f"{_mean(cp, 'cold_us'):.2f}" if cp else "–")
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "† FlashInfer's fused add + RMSNorm works in place: in a graph its 20 calls rewrite one set of "
            "buffers, which stays in L2 (60 MB) while it fits, where khub and the others write 20 new outputs; "
            "graph rows marked so measure that difference too, not the kernel alone (the cold rows rotate "
            "buffers for everyone)."]
    host = {}
    for (op, shp, group), by in rows.items():
        if group == "decode":
            for n, v in by.items():
                if n != "copy":
                    host.setdefault(n, []).append(_mean(v, "host_us"))
    host_cells = ", ".join(f"{n} {sorted(v)[len(v) // 2]:.1f}" for n, v in
                           sorted(host.items(), key=lambda kv: PEER_ORDER.index(kv[0]) if kv[0] in PEER_ORDER else 99))
    out.append("")
    if lead["cold_us"][1]:
        out.append(f"khub at ≥ 1.00× the best peer in every pass: {lead['cold_us'][0]} of {lead['cold_us'][1]} rows cold, "
                   f"{lead['graph_us'][0]} of {lead['graph_us'][1]} in graphs.")
    if pr["provenance"].get("note"):
        out.append(f"Run note: {pr['provenance']['note']}")
    gm = lambda v: math.exp(sum(math.log(x) for x in v) / len(v))  # noqa: E731
    for n, ratios in flavour_ratio.items():
        if ratios["cold_us"]:
            build = n.removeprefix("khub ")
            out.append(f"khub's {build} build against the plain build, geometric mean of {build} / plain over "
                       f"{len(ratios['cold_us'])} rows: cold {gm(ratios['cold_us']):.3f}, graph "
                       f"{gm(ratios['graph_us']):.3f}.")
    if host_cells:
        out.append(f"Host time per call from Python (µs, median over the decode rows; {pr['method']['host']}): "
                   f"{host_cells}.")
    errs = {}
    for c in pr["checks"]:
        e = errs.setdefault(c["impl"], [0.0, 0.0, 0])
        e[0], e[1], e[2] = max(e[0], c["max_abs_err"]), max(e[1], c["max_rel_err"]), e[2] + (not c["ok"])
    out.append("Largest error against the fp32 reference (abs, relative to the largest output): " + ", ".join(
        f"{n} {e[0]:.3g} ({e[1]:.2g})" + (f", **{e[2]} rows wrong**" if e[2] else "") for n, e in errs.items()) + ".")
    if pr["not_offered"]:
        out.append("Not offered: " + "; ".join(f"{n['peer']}, {n['op']}: {n['why']}" for n in pr["not_offered"]) + ".")
    if pr["failures"]:
        out.append("Failed: " + "; ".join(f"{f['impl']} {f['op']} {shape(f['shape'])} ({f['stage']}): {f['error'][:160]}"
                                          for f in pr["failures"]) + ".")
    out.append("")


def ltx_section(out):
    gc, lb = load("h200_gpu_check.json"), load("h200_ltx_block.json")
    if not gc and not lb:
        return
    out += ["## The LTX-Video block on the H200", ""]
    if gc:
        blk = gc["ltx_block"]
        out += [f"`examples/ltx_block` (C++; {blk['what']}; {shape(blk['shape'])} {DTYPE[blk['dtype']]}), "
                f"{source('h200_gpu_check.json', gc)}: PyTorch eager {blk['eager_us']:.1f} µs, khub op for op "
                f"{blk['khub_op_for_op_us']:.1f} µs ({blk['eager_us'] / blk['khub_op_for_op_us']:.2f}×), khub with "
                f"{blk['khub_fused_what']} **{blk['khub_fused_us']:.1f} µs "
                f"({blk['eager_us'] / blk['khub_fused_us']:.2f}×)**.", ""]
    if lb:
        rows = [("PyTorch eager", "eager"), ("PyTorch, torch.compile", "compile"),
                ('PyTorch, compile mode="reduce-overhead"', "compile_graphs"), ("khub's ops from Python", "khub_eager"),
                ("khub's ops inside torch.compile (fullgraph)", "khub_compile"),
                ('khub\'s ops, compile mode="reduce-overhead"', "khub_compile_graphs")]
        ref = lb["compile_loop_us"]
        out += [f"The same block from Python (`bench/ltx_block_baselines.py --khub kernels`, fused q/k norm + RoPE), "
                f"{source('h200_ltx_block.json', lb)}. khub's ops trace into torch.compile through their Meta "
                f"registrations; outputs within {lb['khub_max_rel_diff']:.3f} (relative) of the eager block.", "",
                "| block | µs a call, loop of 10 | one call alone | host µs a call | vs compile (loop) |",
                "|---|---|---|---|---|"]
        for label, k in rows:
            if f"{k}_loop_us" in lb:
                out.append(f"| {label} | {lb[k + '_loop_us']:.1f} | {lb[k + '_us']:.1f} | {lb[k + '_host_us']:.0f} | "
                           f"{ref / lb[k + '_loop_us']:.2f}× |")
        out.append("")


def cpu_kernels_section(out):
    cb = load("cpu_2core_cpu_bench.json")
    if not cb:
        return
    out += ["## Kernels on the CPU", "",
            f"The cpu variants against the eager formulas (bf16, {cb['threads']} threads, median of 15 calls), "
            f"{source('cpu_2core_cpu_bench.json', cb)}, {cb['provenance']['machine']}. "
            f"{cb['provenance'].get('note', '').capitalize()}.", "",
            "| op | shape | khub ms | eager ms | eager / khub |", "|---|---|---|---|---|"]
    for r in cb["results"]:
        out.append(f"| {r['op']} | {shape(r['shape'])} | {r['khub_ms']:.2f} | {r['eager_ms']:.2f} | "
                   f"{r['eager_ms'] / r['khub_ms']:.2f}× |")
    out.append("")


def medians(doc):
    return {b["run_name"]: b for b in doc["benchmarks"] if b.get("aggregate_name") == "median"}


def get_kernel_section(out):
    kb, wk = load("cpu_2core_kernel_bench.json"), load("cpu_2core_warm_get_kernel.json")
    if not kb and not wk:
        return
    out += ["## get_kernel (CPU)", ""]
    if kb:
        m = medians(kb)
        rows = [("BM_WarmGetKernelOnline", "online, cached and loaded (memoised lookups: no HTTP request)"),
                ("BM_WarmGetKernelOffline", "offline (`HF_HUB_OFFLINE=1`), loaded"),
                ("BM_LocalAlreadyLoaded", "`get_local_kernel(dir)`, loaded"),
                ("BM_VerifiedFetchOffline/1", "verified fetch (no torch), unchanged files not re-read"),
                ("BM_VerifiedFetchOffline/0", "verified fetch, every byte hashed again (`khub verify`)")]
        out += [f"`build/bench/kernel_bench` against a loopback Hub in the same process, a 2.9 MB test kernel; "
                f"{source('cpu_2core_kernel_bench.json', kb)}, {kb['provenance']['machine']}. Goal for a warm "
                "call: ≤ 10 ms.", "", "| case | median ms |", "|---|---|"]
        out += [f"| {text} | {m[name]['real_time']:.3f} |" for name, text in rows if name in m]
        out.append("")
    if wk:
        out += [f"Beside the Python `kernels` client ({wk['kernels']}) on one `khub serve`, "
                f"`get_kernel(\"{wk['repo']}\", version=1)` for a 9.4 MB module; "
                f"{source('cpu_2core_warm_get_kernel.json', wk)}:", "",
                "| mode | Python ms | khub ms | Python / khub | Python's first call ms |", "|---|---|---|---|---|"]
        for mode in ("online", "offline"):
            py, kh = wk["python"][mode], wk["khub"][mode]
            out.append(f"| {mode}, warm | {py['median_ms']:.2f} | {kh['median_ms']:.2f} | {wk['ratio'][mode]:.1f}× | "
                       f"{py['first_ms']:.0f} |")
        out.append("")


def download_section(out):
    hb = load("cpu_2core_hub_bench.json")
    if not hb:
        return
    m = medians(hb)
    rows = [("BM_ColdDownload/268435456/0/iterations:3/real_time", "test fixture", "disk (fdatasync real)"),
            ("BM_ColdDownload/268435456/1/iterations:3/real_time", "test fixture", "tmpfs"),
            ("BM_ColdDownloadLocalHub/268435456/0/iterations:3/real_time", "`khub serve`'s server", "disk"),
            ("BM_ColdDownloadLocalHub/268435456/1/iterations:3/real_time", "`khub serve`'s server", "tmpfs")]
    out += ["## Downloads and hashing (CPU)", "",
            "`build/bench/hub_bench`: one 256 MiB LFS file into an empty cache (HEAD, redirect, streamed GET "
            f"with sha256 on the fly, fdatasync, rename), loopback server; {source('cpu_2core_hub_bench.json', hb)}, "
            f"{hb['provenance']['machine']}. Goal: ≥ 500 MB/s.", "",
            "| server | cache on | median ms | MB/s |", "|---|---|---|---|"]
    for name, server, cache in rows:
        if name in m:
            out.append(f"| {server} | {cache} | {m[name]['real_time']:.0f} | {m[name]['bytes_per_second'] / 1e6:.0f} |")
    hashes = [f"{text} {m[name]['bytes_per_second'] / 1e9:.2f} GB/s"
              for name, text in [("BM_Sha256/67108864", "sha256"), ("BM_GitBlobSha1/67108864", "git blob sha1")]
              if name in m]
    if hashes:
        out += ["", f"Hashing 64 MiB in the same run (OpenSSL): {', '.join(hashes)}."]
    out.append("")


def xet_section(out):
    xb = load("cpu_2core_xet_bench.json")
    if not xb:
        return
    rp = xb["repush"]
    out += ["## Xet transfers (CPU)", "",
            f"`bench/xet_bench.py`: khub beside huggingface_hub {xb['huggingface_hub']} + hf_xet {xb['hf_xet']} "
            f"(its default install) against one `khub serve` on loopback, {xb['size_mib']} MiB of random bytes, "
            f"medians of {len(xb['upload']['khub']['seconds'])} runs on fresh repos and caches; "
            f"{source('cpu_2core_xet_bench.json', xb)}, {xb['provenance']['machine']}. Python is timed inside its "
            "process (import excluded), khub as the whole `khub` command (for push: checks and digests "
            "included); each timed run starts after `sync`"
            + (f", each upload after {xb['settle_s']:g} s idle as well (this VM's disk throttles sustained "
               "writes, and both sides' uploads wait on the server's synced writes)" if xb.get("settle_s") else "")
            + "; who goes first alternates. Goal: khub ≥ hf_xet.", "",
            "| transfer | hf_xet MiB/s | khub MiB/s | khub / hf_xet | seconds, hf_xet | seconds, khub |",
            "|---|---|---|---|---|---|"]
    for kind, text in (("download", "download of a file hf_xet uploaded (`hf_hub_download` / `khub download`)"),
                       ("upload", "upload (`upload_file` / `khub push` of a build holding the file)")):
        r = xb[kind]
        spread = {side: f"{min(r[side]['seconds']):.2f}–{max(r[side]['seconds']):.2f}" for side in ("hf_xet", "khub")}
        out.append(f"| {text} | {r['hf_xet']['mib_per_s']:.0f} | {r['khub']['mib_per_s']:.0f} | {r['ratio']:.2f}× "
                   f"| {spread['hf_xet']} | {spread['khub']} |")
    out += ["", f"Re-push of a build whose {rp['file_bytes'] // (1 << 20)} MiB file changed in "
            f"{rp['changed_bytes'] / rp['file_bytes']:.0%} of its bytes (four places): khub sent "
            f"{rp['bytes_uploaded']:,} bytes, {rp['share_sent']:.1%} of the file (goal ≤ 10 %); an unchanged "
            f"re-push sent {rp['unchanged_bytes_uploaded']} bytes.", ""]


def load_section(out):
    lt = load("cpu_2core_loadtest.json")
    if not lt:
        return
    lat = lt["latency_ms"]
    out += ["## localhub under load", "",
            f"`{lt['provenance']['harness']}`: {lt['clients']} client processes against `khub serve` on loopback "
            "(60 % downloads with hash checks, 25 % NDJSON commits, 15 % 1 MiB LFS uploads, each read back); "
            f"{source('cpu_2core_loadtest.json', lt)}, {lt['provenance']['machine']}.", "",
            "| requests/s | MB/s | p50 / p99 ms, all | reads p50 / p99 | writes p50 / p99 | errors, corrupt blobs |",
            "|---|---|---|---|---|---|",
            f"| {lt['requests_per_s']} | {lt['transfer_mb_per_s']} | {lat['all']['p50']} / {lat['all']['p99']} | "
            f"{lat['reads']['p50']} / {lat['reads']['p99']} | {lat['writes']['p50']} / {lat['writes']['p99']} | "
            f"{lt['errors']}, {lt['corrupted_blobs']} |", "",
            "Writes queue behind one SQLite writer and pay their fsyncs; reads never wait for writers.", ""]


def main():
    out = ["# Benchmarks", "",
           "Generated by `python3 bench/render_docs.py > docs/benchmarks.md` (edit the script, not this file) from "
           "`bench/results/`: one current file per harness and machine, each naming its commit, date and machine "
           "(`provenance`). Earlier runs are in git history.", "",
           "## Method", "",
           "* GPU kernels: `bench/kernels/kernels_bench` (C++) times khub's ops through the dispatcher, "
           "`bench/kernels/baselines.py` times PyTorch (the model's eager formula, `F.rms_norm`, "
           "`torch.compile(dynamic=False)`) and khub's ops again in its own process, all with CUDA events.",
           "* cold = median over calls that rotate through buffer sets ≥ 4× L2, each after a GPU sleep, so host "
           "time stays out; graph = per-call time inside a CUDA graph of 20 calls; % of copy = the op's minimum "
           "bytes over the cold time, against the 1 GiB copy of the same run.",
           "* CPU: wall-clock medians (Google Benchmark for `hub_bench` and `kernel_bench`).", ""]
    for section in (kernels_section, peers_section, ltx_section, cpu_kernels_section, get_kernel_section, download_section,
                    xet_section, load_section):
        section(out)
    out += ["## Reproduce", "", "```sh",
            "KHUB_COMMIT=<sha> bench/kernels/run_h200.sh bench baselines   # on the H200: $OUT/h200_*.json",
            "bench/peers/fetch_peers.sh   # then bench/peers/README.md: $OUT/h200_peers.json",
            ".venv-plot/bin/python bench/peers/plot.py   # bench/results/peers_h200.png (matplotlib)",
            "python3 bench/kernels/report.py --png bench/results/kernels_h200.png   # the plot (matplotlib)",
            "python3 bench/record.py run bench/results/cpu_2core_hub_bench.json -- build/bench/hub_bench \\",
            "    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json",
            "python3 bench/record.py run bench/results/cpu_2core_kernel_bench.json -- build/bench/kernel_bench \\",
            "    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json",
            ".venv/bin/python bench/warm_get_kernel.py && .venv/bin/python bench/kernels/cpu_bench.py",
            ".venv/bin/python bench/xet_bench.py",
            "python3 bench/render_docs.py > docs/benchmarks.md", "```"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
