"""`ethlab up TOPO [params] [--target p4sim|bmv2] [--policy P] [--check] [--cli]` and `ethlab down`."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path

from rich.console import Console
from rich.table import Table

from controller.artifacts import DEFAULT_PROGRAM
from controller.policies import POLICIES
from ethlab.bringup import TARGETS, Reachability, RunningFabric, check_reachability, running_fabric
from ethlab.topo_cmd import load_from_args


def summary_table(running: RunningFabric, reach: Reachability | None) -> Table:
    table = Table(title=f"ethlab fabric: {running.topo.name} ({running.controller.policy.describe()})")
    for column in ("switch", "device", "ports", "entries", "grpc"):
        table.add_column(column)
    for sw in running.topo.switches:
        state = running.controller.installed.get(sw.name)
        table.add_row(sw.name, str(sw.device_id), str(len(running.topo.ports(sw.name))),
                      str(state.entries if state else 0), running.controller.addresses[sw.name])
    return table


def reach_table(reach: Reachability) -> Table:
    table = Table(title="reachability (ping, every plane)")
    for column in ("plane", "pairs tried", "unreachable"):
        table.add_column(column)
    for plane, tried in sorted(reach.tried.items()):
        bad = sum(1 for f in reach.failed if f[2] == plane)
        table.add_row(str(plane), str(tried), f"[red]{bad}" if bad else "[green]0")
    return table


def run_up(args: argparse.Namespace) -> int:
    console = Console()
    topo = load_from_args(args.topology, args.extra)
    with console.status("bringing the fabric up") as status, running_fabric(
            topo, target=args.target, policy=args.policy, program=Path(args.program),
            rate_scale=args.rate_scale, progress=lambda msg: status.update(msg)) as running:
        status.update("checking reachability")
        reach = check_reachability(running, per_host=args.sample)
        status.stop()
        console.print(summary_table(running, reach))
        console.print(reach_table(reach))
        timings = ", ".join(f"{k} {v:.2f}s" for k, v in running.timings.items())
        console.print(f"{running.entries} table entries; bring-up phases: {timings}")
        for src, dst, plane in reach.failed[:10]:
            console.print(f"[red]unreachable: {src} → {dst} on plane {plane}")
        if args.check:
            return 0 if reach.ok else 1
        if args.cli:
            from mininet.cli import CLI

            CLI(running.fabric.net)
        else:
            console.print(f"fabric running (run {running.fabric.run.run_id}); Ctrl-C or `ethlab down` to stop")
            stop = threading.Event()
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
            try:
                stop.wait()
            except KeyboardInterrupt:
                pass
    return 0 if reach.ok else 1


def run_down(args: argparse.Namespace) -> int:
    from topologies.cleanup import clean

    reports = clean(None, include_live=True)
    Console().print(f"stopped {len(reports)} ethlab run(s)")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    up = subparsers.add_parser("up", help="bring an emulated fabric up (topology params as --name value)")
    up.add_argument("topology", help="built-in name (ethlab topo list) or a YAML file")
    up.add_argument("--target", choices=sorted(TARGETS), default="p4sim")
    up.add_argument("--policy", choices=sorted(POLICIES), default="ecmp")
    up.add_argument("--program", default=str(DEFAULT_PROGRAM), help="P4 program (default p4src/ethplus.p4)")
    up.add_argument("--rate-scale", type=float, default=None,
                    help="serve links at nominal rate × this factor in the switch queues (default: unlimited)")
    up.add_argument("--sample", type=int, default=None, help="ping only this many peers per host and plane")
    up.add_argument("--check", action="store_true", help="check, print the summary, tear down; exit 1 if unreachable")
    up.add_argument("--cli", action="store_true", help="drop into the Mininet CLI")
    up.set_defaults(func=run_up, accepts_extra=True)
    down = subparsers.add_parser("down", help="stop every running ethlab fabric (recorded runs only)")
    down.set_defaults(func=run_down)
