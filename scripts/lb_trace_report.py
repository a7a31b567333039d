"""Herding, shown from the switches' own decision traces (controller/lb_trace.py files).

For each traced policy: which spine each leaf sent its multi-candidate decisions to, per microsecond
(a picture), and two numbers — the mean share of a leaf's decisions in one microsecond that went to its
single most chosen port (1.0 = every packet onto one port) and the fraction of microseconds in which every
leaf's majority went to the same spine (leaves herding together).

    .venv/bin/python scripts/lb_trace_report.py --topo upn gpus=16 planes=1 radix=8 \\
        --png docs/img/vt-upn-herding.png adaptive-hula=/tmp/hula.json dlb=/tmp/dlb.json
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.lb_trace import Decision, load_trace  # noqa: E402
from topologies.catalog import build  # noqa: E402
from topologies.model import Topology  # noqa: E402


def spine_of(topo: Topology) -> dict[tuple[str, int], str]:
    """(leaf, port) -> the spine that port leads to."""
    out = {}
    for sw in topo.switches:
        for port, link in topo.ports(sw.name).items():
            far = topo.nodes[link.other(sw.name).owner]
            if far.is_switch and "spine" in far.name:
                out[(sw.name, port)] = far.name
    return out


def herding(trace: dict[str, list[Decision]], spines: dict[tuple[str, int], str],
            until_us: int) -> tuple[float, float, dict[str, dict[int, float]]]:
    """(mean spine imbalance per leaf and µs: |2 x share to spine0 - 1|, 1 = all to one spine; fraction of
    µs in which every leaf sent at least 3/4 of its decisions to the same spine; leaf -> µs -> share to
    the first spine)."""
    leaves = sorted(sw for sw in trace if "leaf" in sw)
    first_spine = sorted({s for s in spines.values()})[0]
    shares: list[float] = []
    majority: dict[int, dict[str, str]] = defaultdict(dict)
    picture: dict[str, dict[int, float]] = {}
    for leaf in leaves:
        per_us: dict[int, Counter[int]] = defaultdict(Counter)
        for d in trace[leaf]:
            if d.time_us <= until_us:
                per_us[d.time_us][d.port] += 1
        picture[leaf] = {}
        for t, ports in per_us.items():
            total = sum(ports.values())
            to_first = sum(n for p, n in ports.items() if spines.get((leaf, p)) == first_spine) / total
            shares.append(abs(2 * to_first - 1))
            picture[leaf][t] = to_first
            majority[t][leaf] = "first" if to_first >= 0.75 else ("other" if to_first <= 0.25 else "mixed")
    together = [t for t, m in majority.items() if len(m) == len(leaves) and len(set(m.values())) == 1
                and "mixed" not in m.values()]
    return (sum(shares) / len(shares) if shares else 0.0,
            len(together) / len(majority) if majority else 0.0, picture)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topo", nargs="+", required=True, help="built-in name and key=value parameters")
    ap.add_argument("--png", help="write the picture here")
    ap.add_argument("--until-us", type=int, default=30, help="look at the first N microseconds")
    ap.add_argument("traces", nargs="+", help="label=trace.json")
    args = ap.parse_args()
    try:
        params = {k: int(v) for k, v in (kv.split("=", 1) for kv in args.topo[1:])}
        topo = build(args.topo[0], **params)
        runs = [(lab, load_trace(path)) for lab, path in (t.split("=", 1) for t in args.traces)]
    except (ValueError, OSError, KeyError) as err:
        print(f"lb_trace_report: {err}", file=sys.stderr)
        return 2
    spines = spine_of(topo)
    results = []
    print("| policy | decisions traced (leaves) | mean spine imbalance per leaf-µs | µs with all leaves ≥ 3/4 on one spine |")
    print("|---|---|---|---|")
    for label, trace in runs:
        share, together, picture = herding(trace, spines, args.until_us)
        n = sum(len(v) for k, v in trace.items() if "leaf" in k)
        print(f"| {label} | {n:,} | {share:.2f} | {100 * together:.0f} % |")
        results.append((label, picture))
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np

        fig, axes = plt.subplots(len(results), 1, figsize=(9, 1.2 + 1.3 * len(results)), squeeze=False)
        fig.subplots_adjust(hspace=0.55)
        for ax, (label, picture) in zip(axes[:, 0], results, strict=True):
            leaves = sorted(picture)
            grid = np.full((len(leaves), args.until_us), np.nan)
            for i, leaf in enumerate(leaves):
                for t, v in picture[leaf].items():
                    if 1 <= t <= args.until_us:
                        grid[i, t - 1] = v
            im = ax.imshow(grid, aspect="auto", cmap="coolwarm", vmin=0, vmax=1,
                           extent=(0.5, args.until_us + 0.5, len(leaves) - 0.5, -0.5), interpolation="nearest")
            ax.set_yticks(range(len(leaves)), leaves, fontsize=7)
            ax.set_title(f"{label}: share of each leaf's uplink decisions to spine0, per µs", fontsize=9)
        axes[-1, 0].set_xlabel("virtual time (µs)")
        fig.colorbar(im, ax=axes[:, 0].tolist(), shrink=0.8, label="to spine0")
        fig.savefig(args.png, dpi=110, bbox_inches="tight")
        print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
