"""The plot of docs/experiments.md "lossless": incast and victim completion per variant, from a results directory
of `ethlab run experiments/lossless.yaml` (first repetition of each variant).

Run: .venv/bin/python scripts/lossless_plot.py RESULTS_DIR docs/img/vt-lossless.png
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(results: Path, out: Path) -> None:
    rows = []
    for run in sorted(results.glob("runs/*/rep0/metrics.json"), key=lambda p: p.stat().st_mtime):
        m = json.loads(run.read_text())
        times = {r["collective"]: r["time_s"] * 1e6 for r in m["records"]}
        ll = m["summary"].get("link_layer") or {}
        rows.append((run.parent.parent.name, times.get("incast", 0.0), times.get("victim", 0.0), ll))
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r[1] for r in rows], 0.4, label="incast (4 x 1 MiB -> gpu0)")
    ax.bar([x + 0.2 for x in xs], [r[2] for r in rows], 0.4, label="victim (1 MiB gpu14 -> gpu1)")
    alone = 721 * 1538 * 8 / 200e9 * 1e6  # 721 frames of 1,538 wire bytes at the victim's 200 Gbit/s
    ax.axhline(alone, color="grey", ls="--", lw=1, label=f"victim alone ({alone:.0f} us)")
    for x, (_label, _inc, _vic, ll) in zip(xs, rows, strict=True):
        note = (f"{ll.get('pause_frames', 0)} pauses" if ll.get("flow_control") == "pfc" else
                f"stall {ll.get('credit_stall_ns', 0) / 1e3:.0f} us" if ll.get("flow_control") == "cbfc" else
                "trimmed + sr")
        ax.text(x, 5, note, ha="center", fontsize=8, color="white")
    ax.set_xticks(list(xs), [r[0] for r in rows])
    ax.set_ylabel("completion (us, virtual)")
    ax.set_title("lossless: UPN plane 16 GPUs @400G, incast + victim")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: lossless_plot.py RESULTS_DIR OUT.png")
    main(Path(sys.argv[1]), Path(sys.argv[2]))
