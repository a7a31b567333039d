"""`ethlab up TOPO [params] [--target p4exec|bmv2] [--policy P] [--check] [--cli]` and `ethlab down`."""

from __future__ import annotations

import argparse
import os
import resource
import signal
import threading
import time
from pathlib import Path

from rich.console import Console
from rich.status import Status
from rich.table import Table

from controller.artifacts import DEFAULT_PROGRAM
from controller.policies import POLICIES
from ethlab.bringup import TARGETS, Reachability, RunningFabric, check_reachability, running_fabric
from ethlab.checks import positive_float, positive_int
from ethlab.topo_cmd import load_from_args
from topologies.cpu import tree_cpu_s
from topologies.run_records import proc_start_time
from topologies.switches import SwitchStartError


def summary_table(running: RunningFabric, reach: Reachability | None) -> Table:
    table = Table(title=f"ethlab fabric: {running.topo.name} ({running.controller.policy.describe()})")
    for column in ("switch", "device", "ports", "entries", "grpc"):
        table.add_column(column)
    for sw in running.topo.switches:
        state = running.controller.state.installed.get(sw.name)
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
    """Bring the fabric up; every failure becomes one clear line on stderr (plus a switch's log tail)."""
    console = Console()
    errors = Console(stderr=True)
    try:
        return _up(args, console)
    except SwitchStartError as err:
        head, _, tail = str(err).partition("\n")
        errors.print(f"[red]ethlab up: error:[/red] {head}", highlight=False, soft_wrap=True)
        if tail:
            errors.print(tail, highlight=False, markup=False, soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # noqa: BLE001 - the CLI reports, never a traceback
        errors.print(f"[red]ethlab up: error:[/red] {one_line(err)}", highlight=False, soft_wrap=True)
        return 1


def one_line(err: BaseException) -> str:
    """The most telling single line of an error (a compiler's `file:line:col: error:` line if present);
    causes are followed so `switch X: ...` wrappers keep the root message."""
    text = str(err).strip() or type(err).__name__
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    located = [ln for ln in lines if ": error:" in ln or ": fatal error:" in ln]  # cpp: fatal error
    first = lines[0] if lines else text
    if located and located[0] != first:
        return f"{first.rstrip(':')}: {located[0]}"
    return first


def _up(args: argparse.Namespace, console: Console) -> int:
    topo = load_from_args(args.topology, args.extra)
    program = Path(args.program)
    if not program.is_file():
        raise FileNotFoundError(f"P4 program {program} not found")
    if args.dry_run:
        console.print(f"checked: {topo.name} ({len(topo.switches)} switches, {len(topo.hosts)} hosts) on "
                      f"{args.target}, policy {args.policy}, {program.name}; nothing brought up (--dry-run)",
                      markup=False, highlight=False)
        return 0
    start = time.monotonic()

    def progress(status: Status, msg: str) -> None:
        status.update(f"{msg} [dim]({time.monotonic() - start:.0f}s)[/dim]")

    with console.status("bringing the fabric up") as status, running_fabric(
            topo, target=args.target, policy=args.policy, program=program,
            rate_scale=args.rate_scale, progress=lambda msg: progress(status, msg), label=UP_LABEL) as running:
        progress(status, f"checking reachability ({'all pairs' if args.sample is None else f'{args.sample} peers per host'})")
        t0, cpu0 = time.monotonic(), tree_cpu_s()
        reach = check_reachability(running, per_host=args.sample)
        running.timings["reachability"] = round(time.monotonic() - t0, 3)
        running.cpu_timings["reachability"] = round(tree_cpu_s() - cpu0, 2)
        status.stop()
        console.print(summary_table(running, reach))
        console.print(reach_table(reach))
        timings = ", ".join(f"{k} {v:.2f}s" for k, v in running.timings.items())
        console.print(f"{running.entries} table entries; bring-up phases: {timings}; "
                      f"total {time.monotonic() - start:.1f}s; peak RSS of ethlab {peak_rss_mb():.0f} MB")
        cpu = ", ".join(f"{k} {v:.1f}" for k, v in running.cpu_timings.items())
        console.print(f"CPU seconds of ethlab and its switches and hosts, per phase: {cpu}; "
                      f"load average {os.getloadavg()[0]:.1f}")
        for event in running.controller.state.events:
            if event.kind == "port_monitor_off":  # BMv2: no port status over P4Runtime
                console.print(f"[yellow]note:[/yellow] {event.detail}", highlight=False)
        if reach.retried:
            console.print(f"{reach.retried} pair(s) missed the first 2 s ping and were pinged again "
                          f"({len(reach.failed)} still unreachable)")
        for src, dst, plane in reach.failed[:10]:
            console.print(f"[red]unreachable: {src} → {dst} on plane {plane}")
        fabric = running.fabric
        if args.check:
            pass
        elif args.cli:
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
    if "stop" in fabric.timings:
        steps = ", ".join(f"{k} {v:.2f}s" for k, v in fabric.stop_timings.items())
        console.print(f"torn down in {fabric.timings['stop']:.1f}s ({steps}); ethlab up took "
                      f"{time.monotonic() - start:.1f}s in all (after loading the topology)")
    return 0 if reach.ok else 1


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


UP_LABEL = "up"  # fabrics started by `ethlab up`; tests and experiments label theirs otherwise


DOWN_WAIT_S = 180.0  # how long `down` lets an `ethlab up` tear its own fabric down before cleaning it itself


def run_down(args: argparse.Namespace) -> int:
    """End every `ethlab up`: SIGTERM to its process, which stops its controller (the switch watcher first) and
    then its switches and prints its summary; what is left after DOWN_WAIT_S (or of an `up` that is gone) is
    cleaned from the run's state."""
    from topologies.cleanup import clean

    console = Console()
    owners = _signal_up_owners()
    deadline = time.monotonic() + DOWN_WAIT_S
    while any(proc_start_time(pid) == start for pid, start in owners) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid, start in owners if proc_start_time(pid) == start]
    reports = clean(None, include_live=True, label=UP_LABEL)
    console.print(f"ended {len(owners) - len(left)} `ethlab up` process(es), which tore their fabrics down; "
                  f"cleaned {len(reports)} run(s) directly")
    if left:
        console.print(f"[yellow]note:[/yellow] `ethlab up` pid(s) {left} did not end within {DOWN_WAIT_S:g}s: "
                      "their fabrics were cleaned from outside", highlight=False)
    return 0


def _signal_up_owners() -> list[tuple[int, int]]:
    """SIGTERM to the live owners of `up` runs (only the very process that made the run: pid and start time)."""
    from topologies.run_records import all_runs

    owners: list[tuple[int, int]] = []
    for run in all_runs():
        pid, start = run.owner_pid, run.owner_start
        if run.label != UP_LABEL or pid == os.getpid() or start < 0 or proc_start_time(pid) != start:
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        owners.append((pid, start))
    return owners


def register(subparsers: argparse._SubParsersAction) -> None:
    up = subparsers.add_parser("up", help="bring an emulated fabric up (topology params as --name value)")
    up.add_argument("topology", help="built-in name (ethlab topo list) or a YAML file")
    up.add_argument("--target", choices=sorted(TARGETS), default="p4exec")
    up.add_argument("--policy", choices=sorted(POLICIES), default="ecmp")
    up.add_argument("--program", default=str(DEFAULT_PROGRAM), help="P4 program (default p4src/ethplus.p4)")
    up.add_argument("--rate-scale", type=positive_float, default=None,
                    help="serve links at nominal rate × this factor in the switch queues (default: unlimited)")
    up.add_argument("--sample", type=positive_int, default=None, help="ping only this many peers per host and plane")
    up.add_argument("--check", action="store_true", help="check, print the summary, tear down; exit 1 if unreachable")
    up.add_argument("--cli", action="store_true", help="drop into the Mininet CLI")
    up.add_argument("--dry-run", action="store_true", help="check the topology and options, bring nothing up")
    up.set_defaults(func=run_up, accepts_extra=True)
    down = subparsers.add_parser("down", help="stop every running ethlab fabric (recorded runs only)")
    down.set_defaults(func=run_down)
