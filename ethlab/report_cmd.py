"""`ethlab report RUN_DIR [--plots]`: (re)write a results directory's report.md, optionally redrawing plots.

Useful for a run made before report.md existed, for one that was interrupted, or after changing the plots."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ethlab.experiment.markdown import write_report


def run(args: argparse.Namespace) -> int:
    root = Path(args.run_dir)
    if not (root / "status.json").exists() and not (root / "summary.json").exists():
        print(f"ethlab report: error: {root}: not an ethlab results directory (no status.json or summary.json)",
              file=sys.stderr)
        return 1
    if args.plots:
        from ethlab.experiment.plots import draw_all

        summary = json.loads((root / "summary.json").read_text()) if (root / "summary.json").exists() else {}
        draw_all(root, summary.get("policies") or [])
    print(write_report(root))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("report", help="(re)write report.md of an experiment results directory")
    p.add_argument("run_dir")
    p.add_argument("--plots", action="store_true", help="redraw the plots from the result files first")
    p.set_defaults(func=run)
