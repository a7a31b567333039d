"""Command-line plumbing shared by `python -m traffic lab|fabric` and `ethlab traffic run`: what to replay
(pattern, trace or SimAI workload) and how (engine configuration), from argparse arguments.

Everything is checked before any namespace or fabric comes up: argparse types reject malformed numbers and
sizes with one line, and `check_workload` builds the plan on stand-in endpoints and validates the engine
configuration, so a bad pattern parameter fails in a second, not after a bring-up.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence

import yaml

from traffic.checker import ScheduleError
from traffic.collectives import PATTERNS, canonical
from traffic.records import DEFAULT_BURST, HostConfig, PlannedCollective, ns
from traffic.replay import pattern_plan
from traffic.simai import load_simai
from traffic.trace import TraceError, load, parse_size
from traffic.transport import TRANSPORTS


def parse_params(items: list[str], flag: str = "--param") -> dict:
    """`--param key=value` pairs, values read as YAML scalars (numbers, booleans, lists)."""
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"{flag} {item!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ValueError(f"{flag} {item!r}: the value is not a number, word or list") from None
    return out


def parse_ecn(text: str) -> dict:
    """`KMIN,KMAX,PMAX` (packets, packets, probability) -> the policy's ECN settings."""
    parts = text.split(",")
    try:
        if len(parts) != 3:
            raise ValueError
        kmin, kmax, pmax = int(parts[0]), int(parts[1]), float(parts[2])
    except ValueError:
        raise ValueError(f"--ecn {text!r}: expected KMIN,KMAX,PMAX, e.g. 5,30,0.2") from None
    if not (0 <= kmin <= kmax and 0.0 <= pmax <= 1.0):
        raise ValueError(f"--ecn {text!r}: need 0 <= KMIN <= KMAX and 0 <= PMAX <= 1")
    return {"kmin": kmin, "kmax": kmax, "pmax": pmax}


def _typed(kind: Callable[[str], float], what: str, low: float, strict: bool = True) -> Callable[[str], float]:
    """An argparse type: a finite number above `low` (or at least it, `strict=False`), one-line error."""
    def convert(text: str) -> float:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not math.isfinite(v) or (v <= low if strict else v < low):
            raise argparse.ArgumentTypeError(f"must be {'>' if strict else '>='} {low:g}, got {text}")
        return v
    convert.__name__ = what  # argparse names the type in its messages
    return convert


def _size(text: str) -> str:
    try:
        n = parse_size(text)
    except TraceError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 4096, 256KiB, 1MiB)") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"the message size must be at least 1 byte, got {text!r}")
    return text


def _pattern(text: str) -> str:
    try:
        canonical(text)
    except (KeyError, ValueError):
        raise argparse.ArgumentTypeError(f"unknown pattern {text!r}; known: {', '.join(sorted(PATTERNS))}, moe") \
            from None
    return text


positive_int = _typed(int, "an integer", 0)
positive_float = _typed(float, "a number", 0)
non_negative_float = _typed(float, "a number", 0, strict=False)


def add_workload_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pattern", nargs="?", type=_pattern,
                   help="all_reduce, all_gather, reduce_scatter, all_to_all, moe, broadcast, sendrecv, incast")
    p.add_argument("--trace", help="ethlab trace (YAML/JSON) instead of a pattern")
    p.add_argument("--simai", help="SimAI/AICB workload file instead of a pattern")
    p.add_argument("--size-scale", type=positive_float, default=1.0, help="scale SimAI message sizes")
    p.add_argument("--size", type=_size, default="256KiB", help="message size (nccl-tests convention), e.g. 1MiB")
    p.add_argument("--iterations", type=positive_int, default=1)
    p.add_argument("--gap", type=non_negative_float, default=0.0, help="compute gap between iterations (s)")
    p.add_argument("--algorithm")
    p.add_argument("--param", "--pattern-param", dest="param", action="append", default=[], metavar="KEY=VALUE",
                   help="algorithm parameter: slices, planes, skew, phase, root, sink, microbatches, seed")
    p.add_argument("--rate-mbps", type=positive_float, default=200.0, help="per-flow pacing rate")
    p.add_argument("--port-rate-mbps", type=positive_float, default=None, help="cap per endpoint port (NIC rate)")
    p.add_argument("--mtu", type=positive_int, default=1500)
    p.add_argument("--format", choices=["roce", "ethplus"], default="roce")
    p.add_argument("--reaction", choices=["none", "dcqcn", "hpcc"], default="none")
    p.add_argument("--reaction-param", action="append", default=[], metavar="KEY=VALUE",
                   help="e.g. timer_s=0.005, cnp_interval_s=0.001, g=0.0625 (dcqcn); target_qdepth=8 (hpcc)")
    p.add_argument("--transport", choices=list(TRANSPORTS), default="none",
                   help="none (unreliable: losses only counted), rc-gbn (RoCE RC-like go-back-N), "
                        "sr (selective repeat, UEC RUD-like)")
    p.add_argument("--transport-param", action="append", default=[], metavar="KEY=VALUE",
                   help="e.g. rto_s=0.02, ack_every=8, window=256, reorder_s=0.002, max_timeouts=7")
    p.add_argument("--plane-policy", choices=["pinned", "round-robin", "least-loaded"], default="pinned",
                   help="how the NIC picks one of its planes (and a path entropy) per packet")
    p.add_argument("--spray-unit", choices=["packet", "flowlet"], default="packet")
    p.add_argument("--loss-grace", type=non_negative_float, default=0.05,
                   help="wait for stragglers before calling loss (s)")
    p.add_argument("--time-limit", type=positive_float, default=60.0)
    p.add_argument("--max-packets", type=positive_int, default=2_000_000)
    p.add_argument("--out", help="directory for metrics.json, metrics.csv, flows.csv")


def plan_from_args(a: argparse.Namespace, endpoints: Sequence[int]) -> list[PlannedCollective]:
    if sum(bool(x) for x in (a.pattern, a.trace, a.simai)) != 1:
        raise ValueError("give exactly one of PATTERN, --trace FILE, --simai FILE")
    if a.trace:
        return load(a.trace).plan(list(endpoints))
    if a.simai:
        return load_simai(a.simai, world=len(endpoints), size_scale=a.size_scale,
                          iterations=a.iterations).plan(list(endpoints))
    return pattern_plan(a.pattern, list(endpoints), parse_size(a.size), int(a.iterations), a.algorithm, a.gap,
                        **parse_params(a.param))


def config_from_args(a: argparse.Namespace) -> HostConfig:
    if a.reaction_param and a.reaction == "none":
        raise ValueError("--reaction-param needs --reaction dcqcn or hpcc")
    if getattr(a, "transport_param", None) and getattr(a, "transport", "none") == "none":
        raise ValueError("--transport-param needs --transport rc-gbn or sr")
    return HostConfig(flow_rate_bps=a.rate_mbps * 1e6, mtu=int(a.mtu), reaction=a.reaction,
                      time_limit_ns=ns(a.time_limit), reaction_params=parse_params(a.reaction_param, "--reaction-param"),
                      loss_grace_ns=ns(a.loss_grace), frame_format=a.format, max_packets=int(a.max_packets),
                      port_rate_bps=a.port_rate_mbps * 1e6 if a.port_rate_mbps else None,
                      transport=getattr(a, "transport", "none"),
                      transport_params=parse_params(getattr(a, "transport_param", []), "--transport-param"),
                      plane_policy=getattr(a, "plane_policy", "pinned"),
                      spray_unit=getattr(a, "spray_unit", "packet"), catch_up_frames=DEFAULT_BURST).validate()


def check_workload(a: argparse.Namespace, endpoints: Sequence[int]) -> None:
    """Everything about the workload and the engine that can be checked without a fabric: raises ValueError
    with one sentence. `endpoints`: the topology's endpoint ids (or stand-ins with the same count)."""
    try:
        plan_from_args(a, endpoints)
    except (ScheduleError, TraceError, ValueError, TypeError, KeyError, OSError) as err:
        raise ValueError(str(err).strip("'\"") or type(err).__name__) from None
    config_from_args(a)
