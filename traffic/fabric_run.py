"""Replay traffic on an emulated fabric: bring it up, run, tear down, print the table, write the metrics.

This is `ethlab traffic run PATTERN --topo TOPO [topology params] --policy P --out DIR`; an `ethlab/*_cmd.py`
module makes it an ethlab command with `register_ethlab(subparsers)`, and `python -m traffic fabric` runs the
same code. Fabric bring-up is ethlab's (`ethlab.bringup.running_fabric`), imported only when used.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from traffic.replay import ports_for_topology, replay, results_table
from traffic.runargs import (
    add_workload_arguments,
    check_workload,
    config_from_args,
    parse_ecn,
    plan_from_args,
)


def add_fabric_arguments(p: argparse.ArgumentParser) -> None:
    add_workload_arguments(p)
    p.add_argument("--topo", required=True, help="built-in topology or YAML (topology params: --name value)")
    p.add_argument("--target", default="p4exec", choices=["p4exec", "bmv2"])
    p.add_argument("--policy", default="ecmp", help="ecmp, spray, flowlet, adaptive")
    p.add_argument("--ecn", metavar="KMIN,KMAX,PMAX", help="ECN thresholds for every switch port")
    p.add_argument("--rate-scale", type=float, default=None, help="switch queue rate = link rate x this")
    p.add_argument("--queue-depth", type=int, default=None, help="switch queue depth in packets")


def run_fabric(a: argparse.Namespace) -> int:
    from controller.policies import make_policy
    from ethlab.bringup import running_fabric
    from ethlab.topo_cmd import load_from_args

    topo = load_from_args(a.topo, list(getattr(a, "extra", None) or []))
    options = {}
    try:  # everything is checked before the fabric comes up
        if a.ecn:
            options["ecn"] = parse_ecn(a.ecn)
        check_workload(a, sorted(ep.eid for ep in topo.endpoints.values()))
        policy = make_policy(a.policy, **options)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    console = Console()
    if not console.is_terminal:
        console = Console(width=170)
    with console.status("bringing the fabric up") as status, running_fabric(
            topo, target=a.target, policy=policy, rate_scale=a.rate_scale, queue_depth=a.queue_depth,
            progress=lambda msg: status.update(msg)) as running:
        ports = ports_for_topology(topo, running.fabric.netns)
        eids = sorted({eid for eid, _plane in ports})
        plan = plan_from_args(a, eids)
        status.update(f"replaying {len(plan)} collective instance(s) on {len(eids)} endpoints")
        _result, metrics = replay(plan, ports, config_from_args(a), a.out)
    console.print(results_table(metrics, f"{topo.name} on {a.target}, policy {policy.describe()}"))
    if a.out:
        console.print(f"metrics: {Path(a.out) / 'metrics.json'}, metrics.csv, flows.csv")
    return 0 if metrics.summary["complete"] else 1


def register_ethlab(subparsers: argparse._SubParsersAction) -> None:
    """Add `ethlab traffic run ...` to ethlab's command line."""
    traffic = subparsers.add_parser("traffic", help="replay collective traffic on an emulated fabric")
    sub = traffic.add_subparsers(dest="traffic_command", metavar="SUBCOMMAND")
    run = sub.add_parser("run", help="bring a fabric up, replay a pattern or trace, write metrics, tear down")
    add_fabric_arguments(run)
    run.set_defaults(func=run_fabric, accepts_extra=True)
