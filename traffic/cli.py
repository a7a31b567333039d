"""`python -m traffic`: look at schedules and replay them on a switchless veth lab.

  python -m traffic schedule all_reduce --n 8 --size 1MiB --algorithm tree --slices 4
  python -m traffic lab all_reduce --hosts 4 --size 1MiB --iterations 3 --out /tmp/run
  python -m traffic lab --trace traffic/examples/tp-dp-step.yaml --hosts 4
  python -m traffic lab --simai traffic/examples/simai-mini.txt --hosts 8 --size-scale 0.25

On an emulated fabric: `ethlab traffic run PATTERN --topo TOPO ...` calls the same `traffic.replay`
functions with the fabric's ports instead of the lab's.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence

from rich.console import Console

from traffic.checker import ScheduleError, check, textbook_total_bytes
from traffic.collectives import make_schedule
from traffic.replay import replay, results_table
from traffic.runargs import add_workload_arguments, config_from_args, parse_params, plan_from_args
from traffic.trace import TraceError, parse_size


def cmd_schedule(a: argparse.Namespace) -> int:
    s = make_schedule(a.pattern, list(range(a.n)), parse_size(a.size), a.algorithm, **parse_params(a.param))
    rep = check(s)
    print(f"{s.kind}/{s.algorithm} on {s.n} ranks, {s.size} bytes: {rep.transfers} transfers, "
          f"dependency depth {rep.depth}, {rep.total_bytes} bytes on the wire "
          f"(textbook {textbook_total_bytes(s)}); checker: correct, race-free")
    per = rep.bytes_per_rank
    print("bytes sent per rank:", " ".join(f"{r}:{b}" for r, b in sorted(per.items())))
    if a.show:
        for t in s.transfers[:a.show]:
            print(f"  #{t.id} {t.src}->{t.dst} {t.op:6s} {t.bytes} B chunks {list(t.chunks)} plane {t.plane} "
                  f"after {list(t.depends_on)}")
    return 0


def cmd_lab(a: argparse.Namespace) -> int:
    from traffic.vethlab import VethLab

    plan = plan_from_args(a, list(range(a.hosts)))
    if any(pc.schedule.params.get("in_network") for pc in plan):
        raise ValueError("in-network all-reduce (algorithm inc) needs switches running p4src/ethplus_inc.p4; "
                         "the veth lab has none (use `ethlab traffic run` or an experiment)")
    config = config_from_args(a)
    lab = VethLab(f"{a.prefix}{secrets.token_hex(2)}-", a.hosts)
    try:
        ports = lab.up()
        if a.shape:
            lab.shape(0, a.shape)
        _result, metrics = replay(plan, ports, config, a.out)
    finally:
        lab.down()
    console = Console()
    if not console.is_terminal:
        console = Console(width=170)
    console.print(results_table(metrics, "veth lab (no switch)"))
    if a.out:
        print(f"metrics written to {a.out}/metrics.json, metrics.csv, flows.csv")
    return 0 if metrics.summary["complete"] else 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m traffic", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("schedule", help="build a schedule, prove it correct, print its shape")
    s.add_argument("pattern")
    s.add_argument("--n", type=int, default=8)
    s.add_argument("--size", default="1MiB")
    s.add_argument("--algorithm")
    s.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    s.add_argument("--show", type=int, default=0, metavar="N", help="print the first N transfers")
    s.set_defaults(func=cmd_schedule)
    lab = sub.add_parser("lab", help="replay on host namespaces joined by a Linux bridge (needs root)")
    add_workload_arguments(lab)
    lab.add_argument("--hosts", type=int, default=4)
    lab.add_argument("--shape", metavar="RATE", help="tbf-limit the bridge port towards host 0 (e.g. 20mbit)")
    lab.add_argument("--prefix", default="ethtr-")
    lab.set_defaults(func=cmd_lab)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ScheduleError, TraceError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
