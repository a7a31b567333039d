"""Command-line plumbing shared by `python -m traffic lab|fabric` and `ethlab traffic run`: what to replay
(pattern, trace or SimAI workload) and how (engine configuration), from argparse arguments."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import yaml

from traffic.records import EngineConfig, PlannedCollective
from traffic.replay import pattern_plan
from traffic.simai import load_simai
from traffic.trace import load, parse_size


def parse_params(items: list[str]) -> dict:
    """`--param key=value` pairs, values read as YAML scalars (numbers, booleans, lists)."""
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"--param {item!r}: expected KEY=VALUE")
        out[key] = yaml.safe_load(value)
    return out


def add_workload_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pattern", nargs="?", help="all_reduce, all_gather, reduce_scatter, all_to_all, moe, "
                                              "broadcast, sendrecv, incast")
    p.add_argument("--trace", help="ethlab trace (YAML/JSON) instead of a pattern")
    p.add_argument("--simai", help="SimAI/AICB workload file instead of a pattern")
    p.add_argument("--size-scale", type=float, default=1.0, help="scale SimAI message sizes")
    p.add_argument("--size", default="256KiB", help="message size (nccl-tests convention), e.g. 1MiB")
    p.add_argument("--iterations", type=int, default=1)
    p.add_argument("--gap", type=float, default=0.0, help="compute gap between iterations (s)")
    p.add_argument("--algorithm")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="algorithm parameter: slices, planes, skew, phase, root, sink, microbatches, seed")
    p.add_argument("--rate-mbps", type=float, default=200.0, help="per-flow pacing rate")
    p.add_argument("--port-rate-mbps", type=float, default=None, help="cap per endpoint port (NIC rate)")
    p.add_argument("--mtu", type=int, default=1500)
    p.add_argument("--format", choices=["roce", "ethplus"], default="roce")
    p.add_argument("--reaction", choices=["none", "dcqcn", "hpcc"], default="none")
    p.add_argument("--reaction-param", action="append", default=[], metavar="KEY=VALUE",
                   help="e.g. timer_s=0.005, cnp_interval_s=0.001, g=0.0625 (dcqcn); target_qdepth=8 (hpcc)")
    p.add_argument("--loss-grace", type=float, default=0.05, help="wait for stragglers before calling loss (s)")
    p.add_argument("--time-limit", type=float, default=60.0)
    p.add_argument("--max-packets", type=int, default=2_000_000)
    p.add_argument("--out", help="directory for metrics.json, metrics.csv, flows.csv")


def plan_from_args(a: argparse.Namespace, endpoints: Sequence[int]) -> list[PlannedCollective]:
    if sum(bool(x) for x in (a.pattern, a.trace, a.simai)) != 1:
        raise ValueError("give exactly one of PATTERN, --trace FILE, --simai FILE")
    if a.trace:
        return load(a.trace).plan(list(endpoints))
    if a.simai:
        return load_simai(a.simai, world=len(endpoints), size_scale=a.size_scale,
                          iterations=a.iterations).plan(list(endpoints))
    return pattern_plan(a.pattern, list(endpoints), parse_size(a.size), a.iterations, a.algorithm, a.gap,
                        **parse_params(a.param))


def config_from_args(a: argparse.Namespace) -> EngineConfig:
    if a.reaction_param and a.reaction == "none":
        raise ValueError("--reaction-param needs --reaction dcqcn or hpcc")
    return EngineConfig(rate_bps=a.rate_mbps * 1e6, mtu=a.mtu, reaction=a.reaction, time_limit_s=a.time_limit,
                        reaction_params=parse_params(a.reaction_param), loss_grace_s=a.loss_grace,
                        frame_format=a.format, max_packets=a.max_packets,
                        port_rate_bps=a.port_rate_mbps * 1e6 if a.port_rate_mbps else None)
