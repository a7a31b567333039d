"""One trial in virtual time (`clock: virtual`): the same fabric, P4 program, controller, policy, plan and
faults as `trial.run_trial`, on vfabric's discrete-event fabric at nominal link rates instead of Mininet.

Outputs are the emulated trial's files in the same formats — metrics.json/metrics.csv/flows.csv (the engine's
records), links.csv and switch.json (read from the switches over P4Runtime, as in emulation) — and say
`"clock": "virtual"`. Everything in metrics.json, flows.csv and links.csv is a function of the spec and seed:
reruns are byte-identical. Wall-clock facts (how long the simulation took, events per second) go to
switch.json's "virtual" section only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from controller.artifacts import build_artifacts
from controller.client import SwitchConnection
from ethlab.experiment import collect
from ethlab.experiment.trial import Replayed, TrialResult, TrialSetup, run_trial
from topologies.keys import unknown_keys
from traffic.inc.jobs import INC_PROGRAM, needs_inc
from traffic.metrics import write_all
from vfabric.control import ControlPlane
from vfabric.fabric import FabricConfig, VirtualFabric
from vfabric.hosts import HostConfig
from vfabric.run import BACKENDS, PARTITIONS, Progress, VirtualLimits, VirtualOutcome, VirtualRun
from vfabric.run import START_NS as START_OFFSET_NS

CLOCKS = ("emulated", "virtual")
VIRTUAL_KEYS = {"time_limit_s", "wall_limit_s", "control_delay_s", "probe_interval_s", "sample_interval_s",
                "pipeline_latency_ns", "flow_rate_gbps", "loss_grace_s", "reaction_params", "queue_depth",
                "workers", "backend", "partition"}


class VirtualOptionError(ValueError):
    """A bad `virtual:` option; the message names the key."""


def check_options(options: dict[str, Any] | None, where: str = "virtual") -> dict[str, Any]:
    """Validate the spec's `virtual:` mapping up front (each key's type and range)."""
    opts = dict(options or {})
    extra = unknown_keys(opts, VIRTUAL_KEYS)
    if extra:
        raise VirtualOptionError(f"{where}: {extra}")

    def positive(key: str, allow_zero: bool = False) -> None:
        if key not in opts:
            return
        v = opts[key]
        ok = isinstance(v, int | float) and not isinstance(v, bool) and (v >= 0 if allow_zero else v > 0)
        if not ok or v != v or v in (float("inf"),):
            raise VirtualOptionError(f"{where}.{key}: must be a {'non-negative' if allow_zero else 'positive'} "
                                     f"finite number (got {v!r})")

    for key in ("time_limit_s", "wall_limit_s", "probe_interval_s", "sample_interval_s", "flow_rate_gbps",
                "loss_grace_s"):
        positive(key)
    for key in ("control_delay_s", "pipeline_latency_ns"):
        positive(key, allow_zero=True)
    if "queue_depth" in opts and (not isinstance(opts["queue_depth"], int) or opts["queue_depth"] < 1):
        raise VirtualOptionError(f"{where}.queue_depth: must be an integer >= 1 (got {opts['queue_depth']!r})")
    if "workers" in opts and (not isinstance(opts["workers"], int) or isinstance(opts["workers"], bool)
                              or opts["workers"] < 1):
        raise VirtualOptionError(f"{where}.workers: must be an integer >= 1 (got {opts['workers']!r})")
    if "backend" in opts and opts["backend"] not in BACKENDS:
        raise VirtualOptionError(f"{where}.backend: must be one of {', '.join(BACKENDS)} (got {opts['backend']!r})")
    if "partition" in opts:
        p = opts["partition"]
        if p not in PARTITIONS and not (isinstance(p, list) and p and all(
                isinstance(names, list) and all(isinstance(n, str) for n in names) for names in p)):
            raise VirtualOptionError(f"{where}.partition: must be {' or '.join(PARTITIONS)} or a list of node-name "
                                     f"lists, one per MPI rank (got {p!r})")
    if "reaction_params" in opts and not isinstance(opts["reaction_params"], dict):
        raise VirtualOptionError(f"{where}.reaction_params: must be a mapping")
    return opts


def _limits(opts: dict[str, Any], comm: Any = None) -> VirtualLimits:
    return VirtualLimits(time_limit_s=float(opts.get("time_limit_s", 1.0)),
                         wall_limit_s=float(opts.get("wall_limit_s", 900.0)),
                         control_delay_s=float(opts.get("control_delay_s", 100e-6)),
                         probe_interval_s=float(opts.get("probe_interval_s", 20e-6)),
                         sample_interval_s=opts.get("sample_interval_s"), workers=int(opts.get("workers", 1)),
                         backend=str(opts.get("backend", "fork")), comm=comm,
                         partition=opts.get("partition", "auto"))


def progress_text(p: Progress) -> str:
    rate = p.executions / p.wall_s if p.wall_s > 0 else 0.0
    return (f"virtual {p.now_ns / 1e3:,.1f} µs (limit {p.limit_ns / 1e3:,.0f} µs), {p.packets:,} packets sent, "
            f"{rate:,.0f} pipeline pkt/s")


@dataclass
class VirtualSession:
    """The virtual fabric of one trial, its control plane up over P4Runtime while virtual time stands still."""

    setup: TrialSetup
    opts: dict[str, Any]
    hosts: HostConfig
    fabric_cfg: FabricConfig
    fabric: VirtualFabric
    control: ControlPlane
    limits: VirtualLimits
    on_progress: Callable[[Progress], None] | None = None
    rate_scale: float | None = None  # nominal link rates
    time_digits: int = 9
    run: VirtualRun | None = None
    outcome: VirtualOutcome | None = None

    @property
    def bringup(self) -> dict[str, Any]:
        return {"entries": self.control.entries, "timings": self.control.timings, "clock": "virtual"}

    @property
    def timings(self) -> dict[str, float]:
        return self.control.timings

    def readable(self) -> dict[str, SwitchConnection]:
        assert self.control.controller is not None
        return self.control.controller.live_connections()

    def replay(self, setup: TrialSetup, out_dir: Path, say: Callable[[str], None]) -> Replayed:
        limits = self.limits
        sampler = collect.Sampler(self.readable, setup.topo, limits.sample_interval_s or 1.0)

        def sample(t_s: float) -> None:
            nq, ng = len(sampler.queue), len(sampler.goodput)
            sampler.sample()
            for row in sampler.queue[nq:] + sampler.goodput[ng:]:
                row["t_s"] = round(t_s, 9)  # virtual time, not the wall clock Sampler reads

        if limits.sample_interval_s:
            sample(0.0)
            sampler.goodput.clear()
            sampler.queue.clear()
            sampler.qmax.clear()
        run = self.run = VirtualRun(self.fabric, self.control, limits)
        say(f"replaying {len(setup.plan)} collective(s) under {setup.policy.name} in virtual time")

        def tick(p: Progress) -> None:
            if self.on_progress is not None:
                self.on_progress(p)
            say(progress_text(p))

        line_rate = max((ln.rate_gbps for ln in setup.topo.links), default=100.0) * 1e9
        recorded = replace(self.hosts, flow_rate_bps=self.hosts.flow_rate_bps or line_rate)  # metrics.json's rate
        outcome = self.outcome = run.run(setup.plan, recorded, setup.faults,
                                         sample if limits.sample_interval_s else None, tick)
        metrics = write_all(out_dir, outcome.result)
        metrics.summary["clock"] = "virtual"
        metrics.summary["stopped_by"] = outcome.stopped_by
        _restate_clock(out_dir / "metrics.json", outcome.stopped_by)
        if self.fabric.flow_control:
            self.fabric.flow_stats()  # PFC/CBFC counters up to the end, into each port's LinkCounters
        counters = ({(node, port): lp.counters for node, port, lp in self.fabric.link_ports}
                    if setup.link_layer.active else None)
        return Replayed(metrics, outcome.result.duration_s, outcome.events, sampler, limits.sample_interval_s or 0.0,
                        counters)

    def explain(self, err: Exception) -> Exception | None:
        return None

    def report(self) -> dict[str, Any]:
        assert self.outcome is not None and self.run is not None
        fabric, stats, limits = self.fabric, self.outcome.stats, self.limits
        tm_drops = {n: {k: v for k, v in sw.drops.items() if v} for n, sw in sorted(fabric.switches.items())}
        executions = fabric.executions()
        virtual = {"stopped_by": self.outcome.stopped_by,
                   "virtual_time_s": round((stats.now_ns - self.run.start_ns) / 1e9, 9),
                   "time_limit_s": limits.time_limit_s, "wall_limit_s": limits.wall_limit_s,
                   "events": stats.events, "wall_s": round(stats.wall_s, 3), "simulated_by": self.outcome.partitions,
                   "pipeline_packets": executions,
                   "pipeline_packets_per_wall_s": round(executions / stats.wall_s, 1) if stats.wall_s else None,
                   "pipeline_latency_ns": self.fabric_cfg.pipeline_latency_ns,
                   "control_delay_s": limits.control_delay_s,
                   "traffic_manager_drops": {n: d for n, d in tm_drops.items() if d},
                   "links_lost_in_flight": sum(ln.lost for ln in fabric.links)}
        return {"clock": "virtual", "virtual": virtual}

    def done(self, result: TrialResult) -> None:
        if self.outcome is not None and self.outcome.interrupted:
            raise KeyboardInterrupt


def virtual_host_changes(opts: dict[str, Any]) -> dict[str, Any]:
    """What the virtual clock changes in the run's host options (the spec makes the rest, as for the
    emulated clock): flows at their NIC port's line rate unless `flow_rate_gbps` says otherwise, no
    catch-up bursts (virtual time is never late), and its own loss grace (1 ms unless `loss_grace_s`: RTTs
    are µs here) and reaction parameters."""
    return {"flow_rate_bps": float(opts["flow_rate_gbps"]) * 1e9 if "flow_rate_gbps" in opts else None,
            "catch_up_frames": 0, "loss_grace_ns": int(round(float(opts.get("loss_grace_s", 1e-3)) * 1e9)),
            "reaction_params": dict(opts.get("reaction_params") or {})}


@dataclass
class VirtualClock:
    """Build the virtual fabric for the trial, install it over P4Runtime, close the control plane after."""

    options: dict[str, Any] | None = None
    on_progress: Callable[[Progress], None] | None = None
    comm: Any = None  # MPI ranks that share this trial's partitions (backend "mpi"; vfabric/mpi.py)

    @contextmanager
    def session(self, setup: TrialSetup, out_dir: Path, say: Callable[[str], None]) -> Iterator[VirtualSession]:
        opts = check_options(self.options)
        hosts = replace(setup.engine, **virtual_host_changes(opts))
        fabric_cfg = FabricConfig(queue_depth=int(opts.get("queue_depth") or setup.queue_depth or 64),
                                  pipeline_latency_ns=int(opts.get("pipeline_latency_ns", 400)),
                                  seed=setup.seed or 0, link_layer=setup.link_layer)
        say(f"building {setup.topo.name} in virtual time ({len(setup.topo.switches)} switches)")
        fabric = VirtualFabric(setup.topo, fabric_cfg, hosts)
        inc_artifacts = build_artifacts(INC_PROGRAM, "p4exec") if needs_inc(setup.plan) else None
        control = ControlPlane(fabric, setup.policy, inc_artifacts)  # vfabric/run.py sets up the INC jobs
        try:
            say("installing the tables over P4Runtime (virtual time frozen)")
            control.start()
            yield VirtualSession(setup, opts, hosts, fabric_cfg, fabric, control, _limits(opts, self.comm),
                                 self.on_progress)
        finally:
            control.close()


def run_virtual_trial(setup: TrialSetup, out_dir: Path, progress: Callable[[str], None] | None = None,
                      options: dict[str, Any] | None = None,
                      on_progress: Callable[[Progress], None] | None = None, comm: Any = None) -> TrialResult:
    """`run_trial` on the virtual clock: files written as they exist, as in emulation. `comm`: the MPI
    ranks that share the trial's partitions under `virtual.backend: mpi` (every rank calls this)."""
    check_options(options)
    return run_trial(setup, out_dir, progress, VirtualClock(options, on_progress, comm))


def _restate_clock(path: Path, stopped_by: str) -> None:
    """metrics.json in the engine's format, with the clock (and why the run ended) in its summary."""
    data = json.loads(path.read_text())
    data["summary"]["clock"] = "virtual"
    data["summary"]["stopped_by"] = stopped_by
    path.write_text(json.dumps(data, indent=2) + "\n")


def run_virtual_progress(setup: TrialSetup, out_dir: Path, console: Any,
                         options: dict[str, Any] | None = None) -> TrialResult:
    """`run_virtual_trial` under a rich progress bar: virtual time reached (of the limit) and pipeline pkt/s."""
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    opts = check_options(options)
    limit_us = float(opts.get("time_limit_s", 1.0)) * 1e6
    with Bar(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[info]}"),
                  TimeElapsedColumn(), console=console, transient=False) as bar:
        task = bar.add_task("virtual time", total=limit_us, info="")

        def show(p: Progress) -> None:
            rate = p.executions / p.wall_s if p.wall_s > 0 else 0.0
            bar.update(task, completed=min(limit_us, (p.now_ns - START_OFFSET_NS) / 1e3),
                       info=f"{p.now_ns / 1e3:,.1f} µs virtual, {rate:,.0f} pkt/s")

        return run_virtual_trial(setup, out_dir, lambda msg: bar.update(task, description=msg[:60]) if not
                                 msg.startswith("virtual ") else None, opts, show)
