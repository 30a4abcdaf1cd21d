"""The H200 kernels results as one wide markdown table (stdout) and the plot docs/benchmarks.md shows.

usage: report.py [kernels.json] [baselines.json ...] [--png bench/results/kernels_h200.png] > table.md
Defaults: bench/results/h200_kernels.json and bench/results/h200_baselines.json. A later baselines
file replaces the earlier ones' rows for the cases it has (e.g. an fp32-only rerun after an fp32
change). The plot needs matplotlib (a separate venv, e.g. .venv-plot; not the project venv).
docs/benchmarks.md itself comes from bench/render_docs.py (standard library only).
"""
import argparse
import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"


SHORT = {"bfloat16": "", "float16": " fp16", "float32": " fp32"}
KHUB = "khub (same process)"  # baselines.py's name for khub's ops timed in its own process


def key(r):
    """Same key for a kernels_bench row (shape "[2,2688,2048]x2") and a baselines row (shape
    [2, 2688, 2048, "x2"]); rows from before the dtype field are bf16."""
    op, shape, dtype = r["op"], r["shape"], r.get("dtype", "bfloat16")
    if isinstance(shape, str):
        return op, shape.replace("]x2", ",x2]"), dtype
    return op, "[" + ",".join(str(v) for v in shape) + "]", dtype


def label(r):
    """The shape column: the shape, and the dtype unless bf16."""
    return r["shape"] + SHORT[r.get("dtype", "bfloat16")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("khub", nargs="?", default=str(RESULTS / "h200_kernels.json"))
    ap.add_argument("baselines", nargs="*", default=[str(RESULTS / "h200_baselines.json")])
    ap.add_argument("--png")
    a = ap.parse_args()
    kh = json.load(open(a.khub))
    files = [json.load(open(f)) for f in a.baselines]
    bl = files[0]
    copy = kh["copy_tbps"]
    base = {}
    for f in files:
        cases = {}
        for r in f["results"]:
            cases.setdefault(key(r), {})[r["baseline"]] = r
        base.update(cases)
    rows = []
    print(f"GPU {kh['gpu']}, torch {bl['torch']} (CUDA {bl['cuda']}), commit {kh['commit']}; copy 1 GiB "
          f"{kh['copy_tbps']:.2f} TB/s (C++ cudaMemcpyAsync), {bl['copy_tbps']:.2f} TB/s (tensor.copy_). "
          "Times in µs, median; cold = rotated buffers > 4× L2, graph = per call in a CUDA graph of 20; "
          "TB/s and % of copy on the cold time; bytes = minimum traffic.\n")
    print("| op | shape | khub cold | khub graph | TB/s | % copy | best baseline cold | eager cold | F.rms_norm cold "
          "| compile cold / graph | speed-up vs best | khub cold / graph, baselines' process | same process: vs best "
          "cold / vs compile graph |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in kh["results"]:
        b = dict(base.get(key(r), {}))
        same = b.pop(KHUB, None)
        eager = next((v for n, v in b.items() if n.startswith("eager")), None)
        frms = b.get("F.rms_norm")
        comp = b.get("torch.compile")
        best = min((v["cold_us"] for v in b.values()), default=None)
        fmt = lambda v: f"{v['cold_us']:.1f}" if v else "–"
        both = lambda v: f"{v['cold_us']:.1f} / {v['graph_us']:.1f}" if v else "–"
        rows.append((r, best))
        head = (f"| {r['op']} | {label(r)} | {r['cold_us']:.1f} | {r['graph_us']:.1f} | {r['cold_tbps']:.2f} | "
                f"{100 * r['cold_tbps'] / copy:.0f} |")
        if not best:
            print(head + " – | – | – | – | – | – | – |")
            continue
        vs = "–"
        if same:
            vs = f"{best / same['cold_us']:.2f}× / " + (f"{comp['graph_us'] / same['graph_us']:.2f}×" if comp else "–")
        print(f"{head} {best:.1f} | {fmt(eager)} | {fmt(frms)} | {both(comp)} | {best / r['cold_us']:.2f}× | "
              f"{both(same)} | {vs} |")
    if a.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        labels = [f"{r['op'].replace('_table_qk', '').replace('apply_rotary_emb', 'rope')}\n{label(r)}" for r, _ in rows]
        pct = [100 * r["cold_tbps"] / copy for r, _ in rows]
        bpct = [100 * (r["bytes"] / b / 1e6) / copy if b else 0 for r, b in rows]
        fig, ax = plt.subplots(figsize=(max(12, len(rows) * 0.45), 6))
        xs = range(len(rows))
        ax.bar([x - 0.2 for x in xs], pct, width=0.4, label="khub (cold)")
        ax.bar([x + 0.2 for x in xs], bpct, width=0.4, label="best PyTorch baseline (cold)")
        ax.axhline(100, color="k", lw=0.8, ls="--")
        ax.set_ylabel("% of measured copy bandwidth")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, rotation=90, fontsize=6)
        ax.set_title(f"khub kernels on {kh['gpu']} (bf16 unless marked, cold medians; copy {copy:.2f} TB/s)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.png, dpi=110)


if __name__ == "__main__":
    main()
