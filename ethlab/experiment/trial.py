"""One trial: bring a fabric up under one policy, replay a plan between the hosts' namespaces, read the
switches, tear down. Shared by `ethlab traffic run` (one trial) and `ethlab run` (policies × repetitions).

Everything lands in `out_dir` as soon as it exists: the engine's metrics.json/csv and flows.csv, then
links.csv and switch.json (per-port load, ECN marks, queue maxima, drops, samples over time, fault events),
and the switch logs (the fabric writes them there directly)."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.artifacts import DEFAULT_PROGRAM
from controller.policies import Policy
from controller.targets import target_named
from ethlab.bringup import RunningFabric, running_fabric
from ethlab.experiment import collect
from ethlab.experiment.faults import Fault, FaultInjector, events_dicts
from topologies.model import Topology
from traffic.inc.jobs import INC_PROGRAM, needs_inc, plan_jobs, setup_jobs
from traffic.metrics import Metrics
from traffic.records import EngineConfig, PlannedCollective
from traffic.replay import ports_for_topology, replay


@dataclass
class TrialSetup:
    topo: Topology
    policy: Policy
    plan: list[PlannedCollective]
    engine: EngineConfig
    target: str = "p4exec"
    rate_scale: float | None = None
    queue_depth: int | None = None
    seed: int | None = None
    faults: list[Fault] = field(default_factory=list)
    sample_interval_s: float | None = 0.25


@dataclass
class TrialResult:
    metrics: Metrics
    links: list[dict[str, Any]]
    switch: dict[str, Any]
    timings: dict[str, float]

    @property
    def summary(self) -> dict[str, Any]:
        return self.metrics.summary


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
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


class SwitchCrashed(RuntimeError):
    """A switch process died during the trial (its exit status and log tail are in the message); `result`
    holds what could still be measured, when the trial got that far."""

    def __init__(self, message: str, result: TrialResult | None = None) -> None:
        super().__init__(message)
        self.result = result


def run_trial(setup: TrialSetup, out_dir: Path, progress: Callable[[str], None] | None = None) -> TrialResult:
    """Bring up, replay, collect, tear down; raises after recording what it had (the caller records errors).

    A switch that dies during the trial costs only its own numbers: the others are still read, links.csv and
    switch.json are written (naming the crashed and unread switches), then SwitchCrashed is raised."""
    say = progress or (lambda _m: None)
    out_dir.mkdir(parents=True, exist_ok=True)
    takes_seed = target_named(setup.target).takes_seed
    switch_args = ("--seed", str(setup.seed)) if setup.seed is not None and takes_seed else ()
    with running_fabric(setup.topo, target=setup.target, policy=setup.policy, rate_scale=setup.rate_scale,
                        queue_depth=setup.queue_depth, log_dir=str(out_dir / "switch-logs"), progress=say,
                        switch_args=switch_args,
                        program=INC_PROGRAM if needs_inc(setup.plan) else DEFAULT_PROGRAM) as running:
        try:
            m = _measure(setup, running, out_dir, say)
        except Exception as err:
            dead = running.dead_switches()
            if dead:  # the real cause, not the controller's "connection refused" that followed it
                raise SwitchCrashed(_crash_text(dead)) from err
            raise
        crashed = running.dead_switches()
    sw = {"summary": switch_summary(m.links, m.drops), "drops": m.drops, "links": m.links, "faults": m.events,
          "recovery": recovery(m.events, m.sampler.goodput, m.sampler.interval_s),
          "queue_samples": m.sampler.queue, "goodput_samples": m.sampler.goodput,
          "traffic_duration_s": round(m.duration, 4), "bringup": m.timings,
          "unread": m.unread, "crashed": crashed}
    _write_csv(out_dir / "links.csv", m.links)
    (out_dir / "switch.json").write_text(json.dumps(sw, indent=1))
    result = TrialResult(m.metrics, m.links, sw, m.timings)
    if crashed:
        raise SwitchCrashed(_crash_text(crashed), result)
    return result


def _crash_text(dead: dict[str, str]) -> str:
    return "; ".join(f"{n} {why}" for n, why in dead.items())


@dataclass
class _Measured:
    metrics: Metrics
    links: list[dict]
    drops: Any
    events: list[dict]
    sampler: collect.Sampler
    duration: float
    timings: dict
    unread: dict[str, str]  # switch -> why its counters could not be read at the end


def _measure(setup: TrialSetup, running: RunningFabric, out_dir: Path, say: Callable[[str], None]) -> _Measured:
    """Replay the plan on the running fabric with faults and sampling; the switch-side numbers it yields."""
    (out_dir / "bringup.json").write_text(json.dumps({"entries": running.entries,
                                                      "timings": running.timings}, indent=1))
    ports = ports_for_topology(setup.topo, running.fabric.netns)
    collect.reset_queue_maxima(running.readable())
    before = collect.snapshot(running.readable())
    setup_jobs(running.controller, plan_jobs(setup.plan, setup.topo.planes), say)  # in-network all-reduce
    injector = FaultInjector(running, list(setup.faults))
    sampler = collect.Sampler(running.readable, setup.topo, setup.sample_interval_s or 0.25)
    say(f"replaying {len(setup.plan)} collective(s) under {setup.policy.name}")
    t0 = time.monotonic()
    if setup.sample_interval_s:
        sampler.start()
    injector.start()
    try:
        result, metrics = replay(setup.plan, ports, setup.engine, out_dir)
    finally:
        events = events_dicts(injector.stop())
        if setup.sample_interval_s:
            sampler.stop()
    # Utilisation over the engine's own send/receive window (not its socket and frame set-up).
    duration = result.duration_s or (time.monotonic() - t0)
    say("reading switch counters")
    unread: dict[str, str] = {}
    after = collect.snapshot(running.readable(), unread)
    qmax = collect.merge_maxima(sampler.qmax, collect.read_queue_maxima(running.readable(), unread))
    for sw in (n.name for n in setup.topo.switches):
        if sw not in after.tx and sw not in unread:
            unread[sw] = "not readable (crashed, frozen or not managed)"
    links = collect.link_stats(setup.topo, before, after, qmax, duration, setup.rate_scale)
    drops = collect.drop_stats(before, after)
    timings = dict(running.timings)
    return _Measured(metrics, links, drops, events, sampler, duration, timings, unread)
