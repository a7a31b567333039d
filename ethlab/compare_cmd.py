"""`ethlab compare RUN_A RUN_B`: the same policies in two result directories, metric by metric."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ethlab.checks import UsageError, need, nonneg_float
from ethlab.experiment.aggregate import diff


def _load(path: str) -> dict:
    p = Path(path)
    if p.is_dir():
        p = p / "summary.json"
    if not p.is_file():
        raise UsageError(f"{path}: not an experiment results directory (no {p.name})")
    try:
        data = json.loads(p.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UsageError(f"{p}: not a results summary ({err})") from None
    policies = data.get("policies") if isinstance(data, dict) else None
    need(isinstance(policies, list) and all(isinstance(x, dict) and "policy" in x for x in policies), str(p),
         "not a results summary (no list of policies)")
    return data


def run(args: argparse.Namespace) -> int:
    console = Console()
    if not console.is_terminal:
        console = Console(width=150)
    a, b = _load(args.run_a), _load(args.run_b)
    rows = diff(a["policies"], b["policies"])
    if not rows:
        console.print("[red]no policy in common between the two runs")
        return 1
    t = Table(title=f"{args.run_a} (A) vs {args.run_b} (B)")
    for col in ("policy", "metric", "A", "B", "B − A"):
        t.add_column(col, justify="right")
    for r in rows:
        d = r["digits"]
        fa = "-" if r["a"] is None else f"{r['a']:.{d}f}"
        fb = "-" if r["b"] is None else f"{r['b']:.{d}f}"
        rel = "-"
        if r["rel"] is not None:
            good = (r["rel"] < 0) == (r["better"] == "low") or r["rel"] == 0
            rel = f"[{'green' if good else 'red'}]{100 * r['rel']:+.1f} %"
        t.add_row(r["policy"], r["metric"], fa, fb, rel)
    same = a.get("schedule") == b.get("schedule")
    t.caption = (f"schedules {'identical' if same else 'DIFFER'} ({a.get('schedule')} / {b.get('schedule')}); "
                 "green = B better")
    console.print(t)
    if args.tolerance is not None:
        worst = max((abs(r["rel"]) for r in rows if r["rel"] is not None), default=0.0)
        console.print(f"largest relative difference {100 * worst:.1f} % (tolerance {100 * args.tolerance:.0f} %)")
        return 0 if worst <= args.tolerance else 1
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("compare", help="compare two experiment result directories")
    p.add_argument("run_a")
    p.add_argument("run_b")
    p.add_argument("--tolerance", type=nonneg_float, default=None,
                   help="exit 1 if any metric differs by more than this fraction (e.g. 0.5)")
    p.set_defaults(func=run)
