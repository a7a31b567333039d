"""`ethlab traffic run PATTERN --topo TOPO [--param v ...] --size BYTES --policy P --out DIR`: one fabric,
one pattern, measured like nccl-tests plus the switches' own counters."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml
from rich.console import Console

from controller.policies import POLICIES, make_policy
from ethlab.bringup import TARGETS
from ethlab.experiment.report import links_table
from ethlab.experiment.trial import TrialSetup, run_trial
from ethlab.topo_cmd import load_from_args
from traffic.records import EngineConfig
from traffic.replay import pattern_plan, results_table
from traffic.trace import parse_size


def _kv(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        out[key] = yaml.safe_load(value)
    return out


def run_traffic(args: argparse.Namespace) -> int:
    console = Console()
    if not console.is_terminal:
        console = Console(width=170)
    topo = load_from_args(args.topo, args.extra)
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    params = _kv(args.pattern_param)
    if args.planes is not None:
        params["planes"] = args.planes
    elif len(topo.planes) > 1:
        params.setdefault("planes", len(topo.planes))
    plan = pattern_plan(args.pattern, eids, parse_size(args.size), args.iterations, args.algorithm, **params)
    engine = EngineConfig(rate_bps=args.rate_mbps * 1e6, mtu=args.mtu, reaction=args.reaction,
                          reaction_params=_kv(args.reaction_param) if args.reaction != "none" else {}, frame_format=args.format,
                          time_limit_s=args.time_limit)
    ecn: bool | dict = not args.no_ecn
    if args.ecn and not args.no_ecn:
        kmin, kmax, pmax = args.ecn.split("/")
        ecn = {"kmin": int(kmin), "kmax": int(kmax), "pmax": float(pmax)}
    policy = make_policy(args.policy, ecn=ecn)
    setup = TrialSetup(topo, policy, plan, engine, target=args.target, rate_scale=args.rate_scale,
                       queue_depth=args.queue_depth, seed=args.seed, sample_interval_s=args.sample)
    out = Path(args.out)
    if args.clock == "virtual":
        from ethlab.experiment.virtual_trial import run_virtual_progress

        result = run_virtual_progress(setup, out, console, {"time_limit_s": args.time_limit})
    else:
        with console.status("bringing the fabric up") as status:
            result = run_trial(setup, out, progress=lambda msg: status.update(msg))
    console.print(results_table(result.metrics, f"{args.pattern} on {topo.name} ({policy.describe()}, {args.target})"))
    console.print(links_table(result.links, result.switch["drops"]))
    s = result.switch["summary"]
    console.print(f"switches: max queue {s['max_queue']} pkts, ECN marks {s['switch_ecn_marked']}, "
                  f"drops {s['switch_drops']}, busiest link {100 * s['link_util_max']:.1f} %")
    console.print(f"written: {out}/metrics.json, metrics.csv, flows.csv, links.csv, switch.json, switch-logs/")
    (out / "command.json").write_text(json.dumps({k: v for k, v in vars(args).items() if k != "func"},
                                                 indent=1, default=str))
    return 0 if result.summary["complete"] else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    traffic = subparsers.add_parser("traffic", help="replay collective traffic on an emulated fabric")
    sub = traffic.add_subparsers(dest="traffic_command", metavar="SUBCOMMAND")
    run = sub.add_parser("run", help="bring a fabric up, replay a pattern, read the switches, tear down "
                                     "(topology params as --name value)")
    run.add_argument("pattern", help="all_reduce, all_gather, reduce_scatter, all_to_all, moe, broadcast, "
                                     "sendrecv, incast")
    run.add_argument("--topo", required=True, help="built-in topology name or YAML file")
    run.add_argument("--size", default="256KiB", help="bytes (K/M/G = 1000, KiB/MiB = 1024)")
    run.add_argument("--policy", choices=sorted(POLICIES), default="ecmp")
    run.add_argument("--no-ecn", action="store_true", help="no ECN marking in the switches")
    run.add_argument("--ecn", metavar="KMIN/KMAX/PMAX", help="switch ECN thresholds (packets) and max probability")
    run.add_argument("--iterations", type=int, default=1)
    run.add_argument("--algorithm", default=None)
    run.add_argument("--planes", type=int, default=None, help="stripe over this many planes (default: all)")
    run.add_argument("--pattern-param", action="append", default=[], metavar="KEY=VALUE",
                     help="pattern parameter (slices=4, skew=1, sink=1, ...)")
    run.add_argument("--target", choices=sorted(TARGETS), default="p4exec")
    run.add_argument("--rate-mbps", type=float, default=20.0, help="per-flow pacing rate of the senders")
    run.add_argument("--rate-scale", type=float, default=None, help="switch queues serve nominal rate × this")
    run.add_argument("--queue-depth", type=int, default=None, help="switch queue depth (packets)")
    run.add_argument("--reaction", choices=["none", "dcqcn", "hpcc"], default="none")
    run.add_argument("--reaction-param", action="append", default=[], metavar="KEY=VALUE",
                     help="reaction parameter (dcqcn: timer_s, cnp_interval_s, g, ...)")
    run.add_argument("--format", choices=["roce", "ethplus"], default="roce")
    run.add_argument("--mtu", type=int, default=1500)
    run.add_argument("--seed", type=int, default=1, help="p4exec random() seed")
    run.add_argument("--sample", type=float, default=0.25, help="switch sampling interval (s); 0 = off")
    run.add_argument("--time-limit", type=float, default=60.0, help="seconds (virtual seconds with --clock virtual)")
    run.add_argument("--clock", choices=["emulated", "virtual"], default="emulated",
                     help="virtual: vfabric's deterministic fabric at nominal rates (--rate-mbps/--rate-scale unused)")
    run.add_argument("--out", required=True)
    run.set_defaults(func=run_traffic, accepts_extra=True)
    traffic.set_defaults(func=lambda _a: traffic.print_help() or 2)
