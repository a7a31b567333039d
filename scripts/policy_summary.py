"""Tables and one picture comparing path-selection policies across several `ethlab run` result directories.

For docs/experiments.md ("Adaptive routing without herding"): per variant the median completion time and busbw
over repetitions (with min–max), busbw relative to ECMP and spray, and what the receiver paid — reordered
packets, the largest reorder distance, the largest reorder buffer a selective-repeat receiver needed.

    .venv/bin/python scripts/policy_summary.py results/upn-collisions/<stamp> ... [--png out.png]
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path


def load(root: Path) -> tuple[list[str], dict[str, list[dict]]]:
    """Variants in spec order, and each one's trial rows with its metrics summary."""
    rows = list(csv.DictReader((root / "trials.csv").open()))
    order: list[str] = []
    by: dict[str, list[dict]] = {}
    for r in rows:
        if r["policy"] not in by:
            order.append(r["policy"])
        metrics = json.loads((root / "runs" / r["policy"] / f"rep{r['rep']}" / "metrics.json").read_text())
        by.setdefault(r["policy"], []).append({**r, "summary": metrics["summary"]})
    return order, by


def table(root: Path) -> tuple[str, dict[str, tuple[float, int]]]:
    order, by = load(root)
    med = statistics.median
    bw = {p: med(float(r["busbw_MBps"]) / 1e3 for r in rs) for p, rs in by.items()}
    lines = ["| variant | reps | completion µs, median (min–max) | busbw GB/s | × ECMP | × spray | ECN % | "
             "reordered, median (min–max) | max reorder distance | max reorder buffer (pkts) | retransmitted | "
             "max queue |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    out = {}
    for p in order:
        rs = by[p]
        t = [float(r["time_ms"]) * 1e3 for r in rs]
        re = [int(r["reordered"]) for r in rs]
        rt = [int(r["summary"]["retransmitted"]) for r in rs]
        done = "" if all(r["complete"] == "True" for r in rs) else " (incomplete)"
        ecmp = f"{bw[p] / bw['ecmp']:.2f}" if "ecmp" in bw else "–"
        spray = f"{bw[p] / bw['spray']:.2f}" if "spray" in bw else "–"
        lines.append(f"| {p}{done} | {len(rs)} | {med(t):.1f} ({min(t):.1f}–{max(t):.1f}) | {bw[p]:.1f} | {ecmp} | "
                     f"{spray} | {med(float(r['ecn_pct']) for r in rs):.2f} | {med(re):,.0f} ({min(re)}–{max(re)}) | "
                     f"{max(int(r['reorder_max']) for r in rs)} | {max(int(r['reorder_buffer']) for r in rs)} | "
                     f"{med(rt):,.0f} | {max(int(r['max_queue']) for r in rs)} |")
        out[p] = (bw[p], int(med(re)))
    return "\n".join(lines), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="result directories of `ethlab run`")
    ap.add_argument("--png", help="busbw and reordering per variant, one group per run")
    args = ap.parse_args()
    summaries = []
    for path in args.runs:
        root = Path(path)
        if not (root / "trials.csv").is_file():
            print(f"policy_summary: {root} has no trials.csv (not an `ethlab run` directory)", file=sys.stderr)
            return 2
        text, values = table(root)
        print(f"### {root.name}\n\n{text}\n")
        summaries.append((root.name, values))
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        variants = list(dict.fromkeys(v for _, vals in summaries for v in vals))
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
        width = 0.8 / len(variants)
        for i, v in enumerate(variants):
            xs = [k + i * width for k in range(len(summaries))]
            top.bar(xs, [vals.get(v, (0, 0))[0] for _, vals in summaries], width, label=v)
            bottom.bar(xs, [max(vals.get(v, (0, 0))[1], 0.5) for _, vals in summaries], width, label=v)
        top.set_ylabel("busbw GB/s (median)")
        bottom.set_ylabel("reordered packets (median, log)")
        bottom.set_yscale("log")
        bottom.set_xticks([k + 0.4 - width / 2 for k in range(len(summaries))], [n for n, _ in summaries])
        top.legend(fontsize=8, ncol=4)
        top.set_title("path selection in virtual time (3 seeds each)")
        fig.savefig(args.png, dpi=110, bbox_inches="tight")
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
