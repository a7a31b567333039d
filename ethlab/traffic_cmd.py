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
from ethlab.checks import (
    UsageError,
    check_engine,
    check_fabric,
    check_plan,
    check_traffic,
    need,
    nonneg_float,
    nonneg_int,
    positive,
    positive_float,
    positive_int,
)
from ethlab.experiment.emulated import run_emulated_trial
from ethlab.experiment.report import links_table
from ethlab.experiment.trial import SwitchCrashed, TrialSetup
from ethlab.outdir import claim_out_dir, open_result
from ethlab.topo_cmd import load_from_args
from linklayer import LinkLayerConfig, LinkLayerError
from traffic.records import DEFAULT_BURST, HostConfig, ns
from traffic.replay import pattern_plan, results_table
from traffic.simai import load_simai
from traffic.trace import load as load_trace
from traffic.trace import parse_size
from traffic.transport import TRANSPORTS


def _kv(items: list[str], flag: str) -> dict:
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        need(bool(eq and key), flag, f"{item!r} is not KEY=VALUE")
        out[key] = yaml.safe_load(value)
    return out


def _ecn(args: argparse.Namespace) -> bool | dict:
    if args.no_ecn:
        return False
    if not args.ecn:
        return True
    parts = args.ecn.split("/")
    need(len(parts) == 3, "--ecn", f"{args.ecn!r} is not KMIN/KMAX/PMAX (e.g. 5/50/0.2)")
    try:
        kmin, kmax, pmax = int(parts[0]), int(parts[1]), float(parts[2])
    except ValueError:
        raise UsageError(f"--ecn: {args.ecn!r} is not KMIN/KMAX/PMAX (integers, integers, a probability)") from None
    need(0 <= pmax <= 1, "--ecn", f"PMAX is a probability 0..1 (got {pmax:g})")
    return {"kmin": kmin, "kmax": kmax, "pmax": pmax}


LINK_LAYER_FLAGS = {"link_layer.frame_error_rate": "--frame-error-rate", "link_layer.bit_error_rate": "--bit-error-rate",
                    "link_layer.flow_control": "--flow-control", "link_layer.llr": "--llr-param",
                    "link_layer.pfc": "--pfc-param", "link_layer.cbfc": "--cbfc-param"}


def link_layer(args: argparse.Namespace) -> LinkLayerConfig:
    """The link-layer flags as the spec's `link_layer` mapping, checked (errors name the flag)."""
    llr: bool | dict = bool(args.llr)
    if args.llr_param:
        llr = {"enabled": True, **_kv(args.llr_param, "--llr-param")}
    raw: dict = {"frame_error_rate": args.frame_error_rate, "bit_error_rate": args.bit_error_rate, "llr": llr,
                 "flow_control": args.flow_control, "pfc": _kv(args.pfc_param, "--pfc-param"),
                 "cbfc": _kv(args.cbfc_param, "--cbfc-param")}
    try:
        return LinkLayerConfig.parse(raw)
    except LinkLayerError as err:
        key = str(err).split(":", 1)[0]
        flag = next((f for k, f in LINK_LAYER_FLAGS.items() if key == k or key.startswith(k + ".")), "--link-layer")
        raise UsageError(f"{flag}: {err}") from None


def prepare(args: argparse.Namespace) -> TrialSetup:
    """Everything the trial needs, checked: a bad value fails here, before any fabric comes up."""
    topo = load_from_args(args.topo, args.extra)
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    need(sum(bool(x) for x in (args.pattern, args.trace, args.simai)) == 1, "traffic",
         "give exactly one of PATTERN, --trace FILE, --simai FILE")
    params = _kv(args.pattern_param, "--pattern-param")
    if args.planes is not None:
        params["planes"] = args.planes
    elif len(topo.planes) > 1 and args.pattern:
        params.setdefault("planes", len(topo.planes))
    size = parse_size(args.size)
    check_traffic(size, args.iterations, params, topo)
    if args.trace:
        plan = load_trace(args.trace).plan(eids)
    elif args.simai:
        positive(args.size_scale, "--size-scale", allow_none=False)
        plan = load_simai(args.simai, world=len(eids), size_scale=args.size_scale,
                          iterations=args.iterations).plan(eids)
    else:
        plan = pattern_plan(args.pattern, eids, size, args.iterations, args.algorithm, args.gap, **params)
    check_plan(plan, topo)
    need(args.reaction != "none" or not args.reaction_param, "--reaction-param",
         "needs --reaction dcqcn or hpcc")
    engine = HostConfig(flow_rate_bps=args.rate_mbps * 1e6, mtu=args.mtu, reaction=args.reaction,
                        reaction_params=_kv(args.reaction_param, "--reaction-param"), frame_format=args.format,
                        time_limit_ns=ns(args.time_limit), loss_grace_ns=ns(args.loss_grace),
                        max_packets=args.max_packets,
                        port_rate_bps=args.port_rate_mbps * 1e6 if args.port_rate_mbps is not None else None,
                        transport=args.transport,
                        transport_params=_kv(args.transport_param, "--transport-param"),
                        plane_policy=args.plane_policy, spray_unit=args.spray_unit, catch_up_frames=DEFAULT_BURST)
    need(args.transport != "none" or not args.transport_param, "--transport-param", "needs --transport rc-gbn or sr")
    check_engine(engine)
    check_fabric(args.rate_scale, args.queue_depth)
    need(args.sample >= 0, "--sample", f"must be >= 0 s (got {args.sample:g})")
    try:
        policy = make_policy(args.policy, ecn=_ecn(args))
        if policy.ecn is not None:
            policy.ecn.params()
    except (TypeError, ValueError) as err:
        raise UsageError(f"--policy/--ecn: {err}") from None
    ll = link_layer(args)
    need(not (ll.active and args.target == "bmv2"), "--target bmv2",
         "frame errors, LLR, PFC and CBFC are below what BMv2 models: use --target p4exec")
    return TrialSetup(topo, policy, plan, engine, target=args.target, rate_scale=args.rate_scale,
                      queue_depth=args.queue_depth, seed=args.seed, sample_interval_s=args.sample, link_layer=ll)


def run_traffic(args: argparse.Namespace) -> int:
    console = Console()
    if not console.is_terminal:
        console = Console(width=170)
    setup = prepare(args)
    if args.dry_run:
        transfers = sum(len(pc.schedule.transfers) for pc in setup.plan)
        console.print(f"checked: {len(setup.plan)} collective(s), {transfers} transfers on {setup.topo.name} "
                      f"({len(setup.topo.endpoints)} endpoints), {setup.policy.describe()}, {args.target}; "
                      f"nothing brought up (--dry-run)", markup=False, highlight=False)
        return 0
    out = claim_out_dir(args.out)  # new or empty, ours, writable by nobody else (ethlab/outdir.py)
    # First, so a run that fails later still says what was asked.
    with open_result(out / "command.json") as f:
        f.write(json.dumps({k: v for k, v in vars(args).items() if k != "func"}, indent=1, default=str))
    crash: SwitchCrashed | None = None
    try:
        if args.clock == "virtual":
            from ethlab.experiment.virtual_trial import run_virtual_progress

            result = run_virtual_progress(setup, out, console, {"time_limit_s": args.time_limit})
        else:
            with console.status("bringing the fabric up") as status:
                result = run_emulated_trial(setup, out, progress=lambda msg: status.update(msg))
    except SwitchCrashed as err:
        if err.result is None:
            raise
        crash, result = err, err.result
    what = args.pattern or Path(args.trace or args.simai).name
    console.print(results_table(result.metrics,
                                f"{what} on {setup.topo.name} ({setup.policy.describe()}, {args.target})"))
    console.print(links_table(result.links, result.switch["drops"]))
    s = result.switch["summary"]
    console.print(f"switches: max queue {s['max_queue']} pkts, ECN marks {s['switch_ecn_marked']}, "
                  f"drops {s['switch_drops']}, busiest link {100 * s['link_util_max']:.1f} %")
    if result.switch.get("unread"):
        console.print(f"not read: {', '.join(sorted(result.switch['unread']))}", style="yellow", markup=False)
    console.print(f"written: {out}/command.json, metrics.json, metrics.csv, flows.csv, links.csv, switch.json, "
                  f"switch-logs/")
    if crash is not None:
        console.print(f"ethlab traffic run: a switch crashed: {crash}", style="red", markup=False, highlight=False)
        return 1
    return 0 if result.summary["complete"] else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    traffic = subparsers.add_parser("traffic", help="replay collective traffic on an emulated fabric")
    sub = traffic.add_subparsers(dest="traffic_command", metavar="SUBCOMMAND")
    run = sub.add_parser("run", help="bring a fabric up, replay a pattern, read the switches, tear down "
                                     "(topology params as --name value)")
    run.add_argument("pattern", nargs="?", help="all_reduce, all_gather, reduce_scatter, all_to_all, moe, "
                                                "broadcast, sendrecv, incast")
    run.add_argument("--trace", help="ethlab trace (YAML/JSON) instead of a pattern")
    run.add_argument("--simai", help="SimAI/AICB workload file instead of a pattern")
    run.add_argument("--size-scale", type=positive_float, default=1.0, help="scale SimAI message sizes")
    run.add_argument("--gap", type=nonneg_float, default=0.0, help="compute gap between iterations (s)")
    run.add_argument("--topo", required=True, help="built-in topology name or YAML file")
    run.add_argument("--size", default="256KiB", help="bytes (K/M/G = 1000, KiB/MiB = 1024)")
    run.add_argument("--policy", choices=sorted(POLICIES), default="ecmp")
    run.add_argument("--no-ecn", action="store_true", help="no ECN marking in the switches")
    run.add_argument("--ecn", metavar="KMIN/KMAX/PMAX", help="switch ECN thresholds (packets) and max probability")
    run.add_argument("--iterations", type=positive_int, default=1)
    run.add_argument("--algorithm", default=None)
    run.add_argument("--planes", type=positive_int, default=None, help="stripe over this many planes (default: all)")
    run.add_argument("--pattern-param", action="append", default=[], metavar="KEY=VALUE",
                     help="pattern parameter (slices=4, skew=1, sink=1, ...)")
    run.add_argument("--target", choices=sorted(TARGETS), default="p4exec")
    run.add_argument("--rate-mbps", type=positive_float, default=20.0, help="per-flow pacing rate of the senders")
    run.add_argument("--port-rate-mbps", type=positive_float, default=None, help="cap per endpoint port (NIC rate)")
    run.add_argument("--rate-scale", type=positive_float, default=None, help="switch queues serve nominal rate × this")
    run.add_argument("--queue-depth", type=positive_int, default=None, help="switch queue depth (packets)")
    run.add_argument("--reaction", choices=["none", "dcqcn", "hpcc"], default="none")
    run.add_argument("--reaction-param", action="append", default=[], metavar="KEY=VALUE",
                     help="reaction parameter (dcqcn: timer_s, cnp_interval_s, g, ...)")
    run.add_argument("--format", choices=["roce", "ethplus"], default="roce")
    run.add_argument("--transport", choices=list(TRANSPORTS), default="none",
                     help="none (unreliable: losses only counted), rc-gbn (go-back-N), sr (selective repeat)")
    run.add_argument("--transport-param", action="append", default=[], metavar="KEY=VALUE",
                     help="transport parameter (rto_s, ack_every, window, ...)")
    run.add_argument("--plane-policy", choices=["pinned", "round-robin", "least-loaded"], default="pinned",
                     help="how the NIC picks a plane (and path entropy) per packet")
    run.add_argument("--spray-unit", choices=["packet", "flowlet"], default="packet")
    run.add_argument("--mtu", type=int, default=1500)
    run.add_argument("--seed", type=nonneg_int, default=1, help="p4exec random() seed")
    run.add_argument("--sample", type=nonneg_float, default=0.25, help="switch sampling interval (s); 0 = off")
    run.add_argument("--time-limit", type=positive_float, default=60.0,
                     help="seconds (virtual seconds with --clock virtual)")
    run.add_argument("--loss-grace", type=nonneg_float, default=0.05, help="wait for stragglers before calling loss (s)")
    run.add_argument("--max-packets", type=positive_int, default=2_000_000)
    run.add_argument("--frame-error-rate", type=float, default=0.0, metavar="P",
                     help="link layer: probability a frame fails its FCS at the receiving port (per link direction)")
    run.add_argument("--bit-error-rate", type=float, default=0.0, metavar="P",
                     help="link layer: bit error rate (per frame by its length), instead of --frame-error-rate")
    run.add_argument("--llr", action="store_true", help="link layer: link-level retry on every link")
    run.add_argument("--llr-param", action="append", default=[], metavar="KEY=VALUE",
                     help="LLR knob (max_outstanding_frames, ack_every, ack_delay_ns, replay_timeout_ns, "
                          "max_replays, ...); implies --llr")
    run.add_argument("--flow-control", choices=["none", "pfc", "cbfc"], default="none",
                     help="link layer: flow control on every link")
    run.add_argument("--pfc-param", action="append", default=[], metavar="KEY=VALUE", help="PFC knob")
    run.add_argument("--cbfc-param", action="append", default=[], metavar="KEY=VALUE", help="CBFC knob")
    run.add_argument("--clock", choices=["emulated", "virtual"], default="emulated",
                     help="virtual: vfabric's deterministic fabric at nominal rates (--rate-mbps/--rate-scale unused)")
    run.add_argument("--out", required=True)
    run.add_argument("--dry-run", action="store_true", help="check every value and the plan, bring nothing up")
    run.set_defaults(func=run_traffic, accepts_extra=True)
    traffic.set_defaults(func=lambda _a: traffic.print_help() or 2)
