"""`ethlab clean`: remove the namespaces, interfaces and processes of ethlab runs, from their state files."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from topologies.cleanup import clean, owner_alive
from topologies.run_records import all_runs, state_dir


def run(args: argparse.Namespace) -> int:
    console = Console()
    if args.list:
        table = Table(title=f"ethlab runs ({state_dir()})")
        for col in ("run", "topology", "owner pid", "owner", "netns", "interfaces", "processes"):
            table.add_column(col)
        for r in all_runs():
            table.add_row(r.run_id, r.topology, str(r.owner_pid), "running" if owner_alive(r) else "gone",
                          str(len(r.netns)), str(len(r.interfaces)), str(len(r.pids)))
        console.print(table)
        return 0
    reports = clean(args.run or None, include_live=args.all)
    if not reports:
        console.print("nothing to clean" + ("" if args.all else " (runs whose owner is still running are kept; "
                                             "use --all or --run ID)"))
        return 0
    failed = 0
    for rep in reports:
        console.print(f"run {rep.run_id}: {len(rep.killed)} processes, {len(rep.netns)} namespaces, "
                      f"{len(rep.interfaces)} interfaces removed")
        for err in rep.errors:
            failed += 1
            console.print(f"[red]  {err}")
    return 1 if failed else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("clean", help="remove what ethlab runs left behind (only what they recorded)")
    p.add_argument("--run", action="append", metavar="ID", help="clean this run (repeatable)")
    p.add_argument("--all", action="store_true", help="also runs whose owning process is still alive")
    p.add_argument("--list", action="store_true", help="list recorded runs, remove nothing")
    p.set_defaults(func=run)
