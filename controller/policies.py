"""Path-selection and ECN policies: small classes the fabric application applies to every switch.

A policy says which mode `p4src/ethplus.p4` runs in (its `lb_config` table), how ECN marks (per-port RED
thresholds in `ecn_config`), and may run a helper while the fabric is up (the adaptive policy's probe sender).
Writing your own is shown step by step in docs/controller.md; in short: subclass `Policy` (or a built-in),
set `name` and `mode`, override `lb_params`/`ecn_for_port`/`start`/`stop`, and decorate with `@register`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import ClassVar

from controller.events import FabricEvents
from controller.lb_trace import read_all, write_trace
from controller.watch import ProbeSender
from p4src.wire import (
    LB_ADAPTIVE,
    LB_ECMP,
    LB_FLOWLET,
    LB_SPRAY,
    LBF_DRAIN_GAP,
    LBF_LOCAL_LOAD,
    LBF_NEAR_BEST,
    LBF_RANDOM_TIE,
    LBF_TRACE,
)

__all__ = ["LB_ADAPTIVE", "LB_ECMP", "LB_FLOWLET", "LB_SPRAY", "POLICIES", "EcnSettings", "Policy", "make_policy",
           "register"]


@dataclass(frozen=True)
class EcnSettings:
    """DCQCN-style RED: no marks up to `kmin` packets queued, all marked from `kmax`, linear ramp to `pmax`."""

    kmin: int = 5
    kmax: int = 50
    pmax: float = 0.2

    def params(self) -> dict[str, int]:
        if not 0 <= self.kmin <= self.kmax:
            raise ValueError(f"ECN thresholds need 0 <= kmin <= kmax (got {self.kmin}, {self.kmax})")
        return {"kmin": self.kmin, "kmax": self.kmax, "pmax": min(65535, round(self.pmax * 65536))}


class Policy:
    """Base policy: ECMP on the flow hash with ECN marking at the default thresholds."""

    name: ClassVar[str] = "base"
    mode: ClassVar[int] = LB_ECMP
    flowlet_gap_us: int = 100
    best_hop_timeout_us: int = 1000
    probe_mgrp: int = 0
    uses_probes: ClassVar[bool] = False  # the fabric then installs probe multicast groups on transit switches
    trim_threshold: int = 0  # packet trimming (p4src/include/trim.p4) at this egress depth; 0 = off
    trim_keep_bytes: int = 128
    lb_flags: int = 0  # LBF_* of p4src/include/headers.p4 (lb_tuning); 0 = the mode as it was
    near_slack: int = 0  # adaptive + LBF_NEAR_BEST: packets by which another port must be less loaded
    drain_margin: int = 0  # LBF_DRAIN_GAP: departures after a flowlet's last packet before it may move
    trace: int = 0  # 1 = record decisions in the switch's lb_trace ring (LBF_TRACE)
    trace_file: str = ""  # with trace: where stop() writes every switch's decisions (controller/lb_trace.py)
    ecn: EcnSettings | None = EcnSettings()

    def __init__(self, ecn: EcnSettings | None | bool = True, **options: object) -> None:
        if isinstance(ecn, EcnSettings) or ecn is None:
            self.ecn = ecn
        elif ecn is False:
            self.ecn = None
        for key, value in options.items():
            if not hasattr(self, key):
                raise ValueError(f"policy {self.name} has no option {key!r}")
            setattr(self, key, value)

    def lb_params(self) -> dict[str, int]:
        return {"mode": self.mode, "flowlet_gap_us": self.flowlet_gap_us,
                "best_hop_timeout_us": self.best_hop_timeout_us, "probe_mgrp": self.probe_mgrp}

    def tuning_params(self) -> dict[str, int] | None:
        """lb_tuning's default action, or None to leave it at its default (all off)."""
        flags = int(self.lb_flags) | (LBF_TRACE if self.trace else 0)
        slack, margin = int(self.near_slack), int(self.drain_margin)
        if not 0 <= flags <= 0xFF or not 0 <= slack <= 0xFFFF or not 0 <= margin <= 0xFFFF:
            raise ValueError(f"policy {self.name}: lb_flags must fit 8 bits, near_slack and drain_margin 16 bits")
        if not flags and not slack and not margin:
            return None
        return {"flags": flags, "near_slack": slack, "drain_margin": margin}

    def trim_params(self) -> dict[str, int] | None:
        """trim_config's default action, or None to leave trimming off."""
        if not self.trim_threshold:
            return None
        return {"enable": 1, "threshold": int(self.trim_threshold), "keep_bytes": int(self.trim_keep_bytes)}

    def ecn_for_port(self, switch: str, port: int) -> EcnSettings | None:
        return self.ecn

    fabric: FabricEvents | None = None

    def bind(self, fabric: FabricEvents) -> None:
        """Called when the controller is made, before any table is computed: `self.fabric` (topology, live
        connections; controller/events.py) is then available to `lb_params`/`ecn_for_port`."""
        self.fabric = fabric

    def start(self, fabric: FabricEvents) -> None:
        """Called once the tables are installed; start helpers here."""

    def stop(self) -> None:
        """Called before the fabric goes down."""
        self.save_trace()

    def save_trace(self) -> None:
        """With `trace` and `trace_file`: read every live switch's decision ring and write it (a failure to
        read is reported on stderr, never raised: the run's results are already written)."""
        if not (self.trace and self.trace_file and self.fabric is not None):
            return
        try:
            write_trace(self.trace_file, read_all(self.fabric.live_connections()))
        except Exception as err:  # noqa: BLE001 - teardown goes on
            print(f"policy {self.name}: decision trace not saved: {type(err).__name__}: {err}", file=sys.stderr)

    def describe(self) -> str:
        ecn = f"ECN {self.ecn.kmin}/{self.ecn.kmax}/{self.ecn.pmax}" if self.ecn else "no ECN"
        return f"{self.name} ({ecn})"


POLICIES: dict[str, type[Policy]] = {}


def register(cls: type[Policy]) -> type[Policy]:
    POLICIES[cls.name] = cls
    return cls


@register
class EcmpPolicy(Policy):
    """Per-flow hashing through the action selector: a flow keeps one path; flows spread over paths."""

    name = "ecmp"
    mode = LB_ECMP


@register
class SprayPolicy(Policy):
    """Per-packet round-robin over the live candidates: even load, packets of a flow may reorder."""

    name = "spray"
    mode = LB_SPRAY


@register
class FlowletPolicy(Policy):
    """A burst keeps its path; after `flowlet_gap_us` of silence the flow moves to the least-loaded port."""

    name = "flowlet"
    mode = LB_FLOWLET


@register
class DlbPolicy(Policy):
    """Switch-local dynamic load balancing (no probes, no controller in the loop): per flowlet, where a flowlet
    ends as soon as its previous packet has left this switch (a gap that scales with the link rate: one
    packet time is 82 ns at 400 Gbit/s), the least-loaded live candidate by depth + packets sent to it since
    its last departure, ties broken by random(); `drain_margin` more departures after the flowlet's last
    packet give it a head start on the hops further on. Decisions inside one switch see each other at once, so they
    cannot herd; a flow moves only when none of its packets is queued here, so it reorders only on paths
    further on."""

    name = "dlb"
    mode = LB_FLOWLET
    lb_flags = LBF_LOCAL_LOAD | LBF_DRAIN_GAP | LBF_RANDOM_TIE
    drain_margin = 24  # upn-collisions, 3 seeds: 0-1 reordered packets at 97.5 % of spray's busbw (4: 1-2)


@register
class AdaptivePolicy(Policy):
    """HULA-like: switches keep the best next hop per destination, learnt from probes that carry queue depths.

    Probes are injected with packet-out by the controller (controller/probes.py; never generated inside a
    switch). In the data plane a learnt hop is used while it is younger than `best_hop_timeout_us` and a
    live candidate; otherwise the switch falls back to the least-loaded live candidate (by its egress queue
    depth), not to the ECMP hash. Probes go out every `probe_interval_s`.

    Herding fix (lb_flags, on by default; `lb_flags: 0` gives the plain HULA rule): the probed hop is only
    near-best (LBF_NEAR_BEST): it keeps the traffic while no live candidate is more than `near_slack` packets
    less loaded by the switch's own, current count (LBF_LOCAL_LOAD), ties broken at random; a flow changes
    hop only between flowlets (LBF_DRAIN_GAP). A probe that every leaf read at once can no longer send
    every leaf's flows to the same port: the first packets there raise its local load.
    """

    name = "adaptive"
    mode = LB_ADAPTIVE
    uses_probes = True
    probe_interval_s: float = 0.05
    best_hop_timeout_us: int = 200_000  # four probe rounds: one lost probe does not age a hop out
    lb_flags = LBF_LOCAL_LOAD | LBF_DRAIN_GAP | LBF_RANDOM_TIE | LBF_NEAR_BEST
    near_slack = 1
    drain_margin = 4

    def __init__(self, ecn: EcnSettings | None | bool = True, **options: object) -> None:
        super().__init__(ecn, **options)
        self.sender: ProbeSender | None = None

    def start(self, fabric: FabricEvents) -> None:
        self.sender = ProbeSender(fabric, self.probe_interval_s).start()

    def stop(self) -> None:
        if self.sender is not None:
            self.sender.stop()
            self.sender = None
        super().stop()


def make_policy(name: str, **options: object) -> Policy:
    try:
        cls = POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r} (known: {', '.join(sorted(POLICIES))})") from None
    ecn = options.pop("ecn", True)
    if isinstance(ecn, dict):
        ecn = EcnSettings(**ecn)
    return cls(ecn=ecn, **options)  # type: ignore[arg-type]
