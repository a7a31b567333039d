"""One trial, for both clocks: bring a fabric up under one policy, replay a plan with its faults, read the
switches over P4Runtime, tear down. Shared by `ethlab traffic run` (one trial) and `ethlab run` (policies ×
repetitions).

What differs between the emulated fabric (Mininet namespaces, switch processes, wall clock:
ethlab/experiment/emulated.py) and the virtual-time one (vfabric: ethlab/experiment/virtual_trial.py) sits
behind `TrialClock`/`ClockSession`; reading the switches before and after, link and drop statistics, recovery
and the files are written once, here.

Everything lands in `out_dir` as soon as it exists: bringup.json, the engine's metrics.json/csv and flows.csv,
then links.csv and switch.json (per-port load, ECN marks, queue maxima, drops, samples over time, fault events)."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from controller.client import SwitchConnection
from controller.policies import Policy
from ethlab.experiment import collect
from linklayer import LinkCounters, LinkLayerConfig, run_totals
from topologies.faults import Fault
from topologies.model import Topology
from traffic.metrics import Metrics
from traffic.records import HostConfig, PlannedCollective


@dataclass
class TrialSetup:
    topo: Topology
    policy: Policy
    plan: list[PlannedCollective]
    engine: HostConfig
    target: str = "p4exec"
    rate_scale: float | None = None
    queue_depth: int | None = None
    seed: int | None = None
    faults: list[Fault] = field(default_factory=list)
    sample_interval_s: float | None = 0.25
    link_layer: LinkLayerConfig = field(default_factory=LinkLayerConfig)  # inactive: no link layer at all


@dataclass
class TrialResult:
    metrics: Metrics
    links: list[dict[str, Any]]
    switch: dict[str, Any]
    timings: dict[str, float]

    @property
    def summary(self) -> dict[str, Any]:
        return self.metrics.summary


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        path.write_text("")
        return
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def switch_summary(links: list[dict[str, Any]], drops: dict[str, dict[str, int]]) -> dict[str, Any]:
    """The switch-side numbers a comparison table shows next to the engine's."""
    used = [r for r in links if r["tx_packets"]]
    return {"max_queue": max((r["qdepth_max"] for r in links), default=0),
            "switch_ecn_marked": sum(r["ecn_marked"] for r in links),
            "switch_drops": sum(sum(d.values()) for d in drops.values()),
            "link_util_max": max((r["utilisation"] for r in links), default=0.0),
            "link_util_mean_used": (sum(r["utilisation"] for r in used) / len(used)) if used else 0.0,
            "links_used": len(used)}


def recovery(events: list[dict[str, Any]], goodput: list[dict[str, Any]], interval_s: float) -> list[dict]:
    """Per link-down/stop/slow fault: time from the fault to the end of the first sampling interval that lies
    wholly after the fault and delivers at least half the packets per interval seen before it (an upper
    bound, resolution one interval). A sample at `t_s` covers the time since the previous sample."""
    out = []
    spans = [(goodput[i - 1]["t_s"] if i else 0.0, g["t_s"], g["packets"]) for i, g in enumerate(goodput)]
    for ev in events:
        if ev["action"] not in ("link_down", "switch_stop", "slow_link"):
            continue
        at = ev["at_s"]
        before = [n / max(t1 - t0, 1e-3) for t0, t1, n in spans if t1 <= at and n]
        if not before:  # fault before the first full sample: the run's typical level instead
            before = [n / max(t1 - t0, 1e-3) for t0, t1, n in spans if n]
        level = sum(before[-4:]) / len(before[-4:]) if before else 0.0  # packets per second
        back = next((t1 for t0, t1, n in spans if t0 >= at and level and n / max(t1 - t0, 1e-3) >= 0.5 * level),
                    None)
        out.append({"fault": ev["action"], "target": ev["target"], "at_s": at, "control_s": ev["control_s"],
                    "baseline_pkts_per_s": round(level, 1),
                    "recovery_s": None if back is None else round(back - at, 3), "interval_s": interval_s})
    return out


@dataclass
class Replayed:
    """What a clock's replay hands back: the engine's metrics (files already written), the traffic's duration
    in seconds, the fault events, and the sampler that ran beside it."""

    metrics: Metrics
    duration_s: float
    events: list[dict[str, Any]]
    sampler: collect.Sampler
    recovery_interval_s: float  # resolution of the recovery estimate; 0: no estimate (nothing sampled)
    # link-layer counters per (node, port) — switches and host NIC ports; None: the link layer was off
    link_counters: dict[tuple[str, int], LinkCounters] | None = None
    buffer_drops: int = 0  # frames the traffic managers' buffers dropped (flow control's business)


class ClockSession(Protocol):
    """A fabric that is up on one clock, for the duration of one trial."""

    @property
    def bringup(self) -> dict[str, Any]: ...  # written to bringup.json before the traffic
    @property
    def timings(self) -> dict[str, float]: ...  # bring-up phases, for the result
    @property
    def rate_scale(self) -> float | None: ...  # link rates scaled by (emulation) or None (nominal)
    @property
    def time_digits(self) -> int: ...  # decimals of seconds the clock's records keep

    def readable(self) -> dict[str, SwitchConnection]: ...  # sessions of the switches that can be read now
    def replay(self, setup: TrialSetup, out_dir: Path, say: Callable[[str], None]) -> Replayed: ...
    def explain(self, err: Exception) -> Exception | None: ...  # the real cause of a failed trial, if known
    def report(self) -> dict[str, Any]: ...  # the clock's own sections of switch.json
    def done(self, result: TrialResult) -> None: ...  # raise what the trial ended with (crash, interrupt)


class TrialClock(Protocol):
    def session(self, setup: TrialSetup, out_dir: Path,
                say: Callable[[str], None]) -> AbstractContextManager[ClockSession]: ...


class SwitchCrashed(RuntimeError):
    """A switch process died during the trial (its exit status and log tail are in the message); `result`
    holds what could still be measured, when the trial got that far."""

    def __init__(self, message: str, result: TrialResult | None = None) -> None:
        super().__init__(message)
        self.result = result


def run_trial(setup: TrialSetup, out_dir: Path, progress: Callable[[str], None] | None,
              clock: TrialClock) -> TrialResult:
    """Bring up, replay, collect, tear down on `clock` (emulated.EmulatedClock, virtual_trial.VirtualClock); raises after recording
    what it had (the caller records errors).

    A switch that dies during an emulated trial costs only its own numbers: the others are still read,
    links.csv and switch.json are written (naming the crashed and unread switches), then SwitchCrashed is
    raised."""
    say = progress or (lambda _m: None)
    out_dir.mkdir(parents=True, exist_ok=True)
    with clock.session(setup, out_dir, say) as session:
        try:
            m = _measure(setup, session, out_dir, say)
        except Exception as err:
            cause = session.explain(err)
            if cause is not None:
                raise cause from err
            raise
        extra = session.report()
    interval = m.replayed.recovery_interval_s
    sampler = m.replayed.sampler
    sw = {"summary": switch_summary(m.links, m.drops), "drops": m.drops, "links": m.links,
          "faults": m.replayed.events,
          "recovery": recovery(m.replayed.events, sampler.goodput, interval) if interval else [],
          "queue_samples": sampler.queue, "goodput_samples": sampler.goodput,
          "traffic_duration_s": round(m.replayed.duration_s, session.time_digits), "bringup": session.timings,
          "unread": m.unread, **extra}
    if m.replayed.link_counters is not None:
        add_link_layer(setup, m.replayed, m.links, out_dir)
    write_csv(out_dir / "links.csv", m.links)
    (out_dir / "switch.json").write_text(json.dumps(sw, indent=1))
    result = TrialResult(m.replayed.metrics, m.links, sw, session.timings)
    session.done(result)
    return result


def add_link_layer(setup: TrialSetup, replayed: Replayed, links: list[dict[str, Any]], out_dir: Path) -> None:
    """The link layer's numbers where the run's records are: the totals in metrics.json's summary (`link_layer`),
    each switch port's counters as columns of its links.csv row. Only for a run with the link layer on: without
    it every file stays byte for byte what it was."""
    counters = replayed.link_counters or {}
    totals = {**setup.link_layer.describe(), **run_totals(counters.values(), replayed.buffer_drops)}
    replayed.metrics.summary["link_layer"] = totals
    path = out_dir / "metrics.json"
    data = json.loads(path.read_text())
    data["summary"]["link_layer"] = totals
    path.write_text(json.dumps(data, indent=2) + "\n")
    zero = LinkCounters()
    for row in links:
        row.update(counters.get((row["switch"], row["port"]), zero).as_dict())


@dataclass
class _Measured:
    replayed: Replayed
    links: list[dict]
    drops: Any
    unread: dict[str, str]  # switch -> why its counters could not be read at the end


def _measure(setup: TrialSetup, session: ClockSession, out_dir: Path, say: Callable[[str], None]) -> _Measured:
    """Replay the plan on the running fabric with faults and sampling; the switch-side numbers it yields."""
    (out_dir / "bringup.json").write_text(json.dumps(session.bringup, indent=1))
    collect.reset_queue_maxima(session.readable())
    before = collect.snapshot(session.readable())
    replayed = session.replay(setup, out_dir, say)
    say("reading switch counters over P4Runtime")
    unread: dict[str, str] = {}
    after = collect.snapshot(session.readable(), unread)
    qmax = collect.merge_maxima(replayed.sampler.qmax, collect.read_queue_maxima(session.readable(), unread))
    for sw in (n.name for n in setup.topo.switches):
        if sw not in after.tx and sw not in unread:
            unread[sw] = "not readable (crashed, frozen or not managed)"
    links = collect.link_stats(setup.topo, before, after, qmax, replayed.duration_s, session.rate_scale)
    drops = collect.drop_stats(before, after)
    return _Measured(replayed, links, drops, unread)
