"""The plot docs/benchmarks.md shows beside the peers table: for each row of h200_peers.json, the best
peer's time over khub's (≥ 1: khub faster), cold and in graphs, each pass a dot. Needs matplotlib
(a separate venv, e.g. .venv-plot; the table itself comes from bench/render_docs.py).

usage: plot.py [bench/results/h200_peers.json] [--png bench/results/peers_h200.png]
"""
import argparse
import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"
NOT_PEERS = ("khub", "khub stable-abi", "khub tvm-ffi", "copy")  # khub's builds and the copy


def ratios(doc):
    """[(label, [cold per pass], [graph per pass])] in the file's row order; best peer = fastest mean
    of the peers whose output passed the check."""
    ok = {(c["op"], str(c["shape"]), c["impl"]) for c in doc["checks"] if c["ok"]}
    rows = {}
    for r in doc["results"]:
        rows.setdefault((r["op"], str(r["shape"]), r["group"]), {}).setdefault(r["impl"], []).append(r)
    out = []
    for (op, shape, group), by in rows.items():
        kh = by.get("khub")
        peers = {n: v for n, v in by.items() if n not in NOT_PEERS and (op, shape, n) in ok}
        if not kh or not peers:
            continue
        label = f"{op} {shape.replace(' ', '')}" + (" (decode)" if group == "decode" else "")
        per_key = []
        for key in ("cold_us", "graph_us"):
            best = min(peers.values(), key=lambda v: sum(r[key] for r in v) / len(v))
            per_key.append([p[key] / k[key] for p, k in zip(best, kh)])
        out.append((label, *per_key))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json", nargs="?", default=str(RESULTS / "h200_peers.json"))
    ap.add_argument("--png", default=str(RESULTS / "peers_h200.png"))
    a = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    doc = json.loads(Path(a.json).read_text())
    rows = ratios(doc)
    fig, ax = plt.subplots(figsize=(8, 0.2 * len(rows) + 1.2))
    for i, (_, cold, graph) in enumerate(rows):
        ax.scatter(cold, [i - 0.15] * len(cold), s=12, color="tab:blue", label="cold" if i == 0 else None)
        ax.scatter(graph, [i + 0.15] * len(graph), s=12, color="tab:orange", label="graph" if i == 0 else None)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=6)
    ax.set_xlabel("best peer time / khub time (≥ 1: khub faster); one dot per pass")
    ax.set_title(f"khub vs QuACK, Liger, FlashInfer, PyTorch on the H200 ({doc['provenance']['commit']})", fontsize=9)
    ax.legend(loc="lower right", fontsize=7)
    ax.grid(axis="x", lw=0.3)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    fig.subplots_adjust(left=0.3, right=0.98, top=1 - 0.5 / fig.get_figheight(), bottom=0.55 / fig.get_figheight())
    fig.savefig(a.png, dpi=110)
    print(f"{a.png}: {len(rows)} rows")


if __name__ == "__main__":
    main()
