"""Completion vs frame error rate from an `experiments/llr.yaml` run (docs/experiments.md's figure).

Run: .venv/bin/python scripts/plot_llr.py RESULTS_DIR [OUT.png]
RESULTS_DIR is the run's directory (the one holding summary.json); policy labels are TRANSPORT-ferRATE-llr|nollr.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ZERO_AT = 3e-7  # where FER 0 is drawn on the log axis


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[0])
    out = Path(argv[1]) if len(argv) > 1 else root / "plots" / "llr-completion.png"
    summary = json.loads((root / "summary.json").read_text())
    lines: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    for agg in summary["policies"]:
        m = re.fullmatch(r"(.+)-fer([0-9.e+-]+)-(llr|nollr)", agg["policy"])
        if m is None:
            continue
        transport, llr, rate = m[1], m[3], float(m[2])
        lines.setdefault((transport, llr == "llr"), []).append((rate or ZERO_AT, 1e3 * agg["time_ms"]))
    fig, ax = plt.subplots(figsize=(7, 4))
    for (transport, llr), pts in sorted(lines.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if llr else "s",
                linestyle="-" if llr else "--", label=f"{transport}, LLR {'on' if llr else 'off'}")
    ax.set_xscale("log")
    ticks = [ZERO_AT, 1e-6, 1e-5, 1e-4, 1e-3]
    ax.set_xticks(ticks, ["0", "1e-6", "1e-5", "1e-4", "1e-3"])
    ax.set_xlabel("frame error rate per link direction")
    ax.set_ylabel("all-reduce completion (µs, virtual)")
    ax.set_title("4 MiB ring all-reduce, ERack+ plane 8 × 400 Gbit/s")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
