"""Checks of what a user asks for, run before any fabric comes up: one rule per value, shared by the
`ethlab` commands and experiment specs, so a bad number fails in a second with one line saying which and
why, not after bring-up with a traceback.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from topologies.model import Topology
from traffic.engine import Engine
from traffic.reaction import make_reaction
from traffic.records import HostConfig, PlannedCollective

LINK_MTU = 1500  # the fabric's veths: an IP packet larger than this cannot leave a host


class UsageError(ValueError):
    """A value the user gave that cannot work; the message names it."""


def _number(kind: type, low: float, inclusive: bool) -> Callable[[str], Any]:
    """An argparse `type=`: a finite number of `kind` at or above (or strictly above) `low`."""
    def convert(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
        if not math.isfinite(value) or (value < low if inclusive else value <= low):
            raise argparse.ArgumentTypeError(f"must be {'>=' if inclusive else '>'} {low:g} (got {text})")
        return value

    convert.__name__ = f"{'integer' if kind is int else 'number'}"
    return convert


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse `type=`: an integer in [low, high] (a billion repetitions is a typo, not a plan)."""
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in {low}..{high} (got {text})")
        return value

    convert.__name__ = "integer"
    return convert


positive_int = _number(int, 1, inclusive=True)
nonneg_int = _number(int, 0, inclusive=True)
positive_float = _number(float, 0.0, inclusive=False)
nonneg_float = _number(float, 0.0, inclusive=True)


def need(cond: bool, what: str, msg: str) -> None:
    if not cond:
        raise UsageError(f"{what}: {msg}")


def positive(value: float | None, what: str, allow_none: bool = True) -> None:
    if value is None:
        need(allow_none, what, "is required")
        return
    need(value > 0, what, f"must be > 0 (got {value:g})")


def check_engine(config: HostConfig, what: str = "engine") -> None:
    """Every engine setting, with the engine's own rules for the frame format and the MTU (the user's
    units, seconds, in the messages)."""
    positive(config.flow_rate_bps, f"{what} rate", allow_none=False)
    positive(config.port_rate_bps, f"{what} port rate")
    positive(config.time_limit_ns / 1e9, f"{what} time limit", allow_none=False)
    need(config.loss_grace_ns >= 0, f"{what} loss grace", f"must be >= 0 (got {config.loss_grace_ns / 1e9:g})")
    need(config.max_packets >= 1, f"{what} max packets", f"must be >= 1 (got {config.max_packets})")
    need(config.catch_up_frames >= 1, f"{what} burst", f"must be >= 1 (got {config.catch_up_frames})")
    need(config.mtu <= LINK_MTU, f"{what} MTU", f"{config.mtu} is above the fabric's link MTU {LINK_MTU}")
    try:
        Engine({}, config)  # no ports: only its checks of the frame format and the MTU run
        make_reaction(config.reaction, config.flow_rate_bps or 0.0, **config.reaction_params)
    except (ValueError, TypeError) as err:
        raise UsageError(f"{what}: {err}") from None


def check_fabric(rate_scale: float | None, queue_depth: int | None) -> None:
    positive(rate_scale, "rate scale")
    need(queue_depth is None or queue_depth >= 1, "queue depth", f"must be >= 1 packet (got {queue_depth})")


def check_traffic(size: int | None, iterations: int, params: dict[str, Any], topo: Topology) -> None:
    """Values a schedule generator would accept but the fabric cannot run (or that measure nothing)."""
    need(size is None or size >= 1, "size", f"must be at least 1 byte (got {size})")
    need(iterations >= 1, "iterations", f"must be >= 1 (got {iterations})")
    planes = params.get("planes")
    if planes is not None:
        have = len(topo.planes)
        need(isinstance(planes, int) and 1 <= planes <= have, "planes",
             f"{topo.name} has {have} plane(s); got {planes!r}")


def check_plan(plan: list[PlannedCollective], topo: Topology) -> None:
    """Every transfer between endpoints and on planes the topology has."""
    need(bool(plan), "traffic", "the plan has no collective")
    eids = {ep.eid for ep in topo.endpoints.values()}
    planes = set(topo.planes)
    for pc in plan:
        for tr in pc.schedule.transfers:
            need(tr.src in eids and tr.dst in eids, "traffic",
                 f"{pc.name}: transfer {tr.src}->{tr.dst} names an endpoint {topo.name} does not have")
            need(tr.plane in planes, "traffic", f"{pc.name}: plane {tr.plane} is not one of {topo.name}'s "
                 f"{sorted(planes)}")
