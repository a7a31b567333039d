"""The emulated clock of a trial: Mininet namespaces, switch processes and the replay engine on sockets, in
wall-clock time (`ClockSession` of ethlab/experiment/trial.py). The switch logs land in the trial's directory."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.artifacts import DEFAULT_PROGRAM
from controller.client import SwitchConnection
from controller.targets import target_named
from ethlab.bringup import RunningFabric, running_fabric
from ethlab.experiment import collect
from ethlab.experiment.faults import emulated_injector, events_dicts, finish_faults
from ethlab.experiment.trial import Replayed, SwitchCrashed, TrialResult, TrialSetup, run_trial
from traffic.inc.jobs import INC_PROGRAM, needs_inc, plan_jobs, setup_jobs
from traffic.replay import ports_for_topology, replay


def _crash_text(dead: dict[str, str]) -> str:
    return "; ".join(f"{n} {why}" for n, why in dead.items())


@dataclass
class EmulatedSession:
    running: RunningFabric
    rate_scale: float | None
    time_digits: int = 4
    crashed: dict[str, str] = field(default_factory=dict)

    @property
    def bringup(self) -> dict[str, Any]:
        return {"entries": self.running.entries, "timings": self.running.timings}

    @property
    def timings(self) -> dict[str, float]:
        return dict(self.running.timings)

    def readable(self) -> dict[str, SwitchConnection]:
        return self.running.readable()

    def replay(self, setup: TrialSetup, out_dir: Path, say: Callable[[str], None]) -> Replayed:
        running = self.running
        ports = ports_for_topology(setup.topo, running.fabric.netns)
        setup_jobs(running.controller, plan_jobs(setup.plan, setup.topo.planes), say)  # in-network all-reduce
        injector = emulated_injector(running, list(setup.faults))
        sampler = collect.Sampler(running.readable, setup.topo, setup.sample_interval_s or 0.25)
        say(f"replaying {len(setup.plan)} collective(s) under {setup.policy.name}")
        t0 = time.monotonic()
        if setup.sample_interval_s:
            sampler.start()
        injector.start()
        try:
            result, metrics = replay(setup.plan, ports, setup.engine, out_dir)
        finally:
            events = events_dicts(finish_faults(injector, running))
            if setup.sample_interval_s:
                sampler.stop()
        # Utilisation over the engine's own send/receive window (not its socket and frame set-up).
        duration = result.duration_s or (time.monotonic() - t0)
        return Replayed(metrics, duration, events, sampler, sampler.interval_s)

    def explain(self, err: Exception) -> Exception | None:
        dead = self.running.dead_switches()  # the real cause, not the controller's "connection refused"
        return SwitchCrashed(_crash_text(dead)) if dead else None

    def report(self) -> dict[str, Any]:
        self.crashed = self.running.dead_switches()
        return {"crashed": self.crashed}

    def done(self, result: TrialResult) -> None:
        if self.crashed:
            raise SwitchCrashed(_crash_text(self.crashed), result)


@dataclass
class EmulatedClock:
    """Bring the fabric up in namespaces for the trial and tear it down after."""

    @contextmanager
    def session(self, setup: TrialSetup, out_dir: Path, say: Callable[[str], None]) -> Iterator[EmulatedSession]:
        takes_seed = target_named(setup.target).takes_seed
        switch_args = ("--seed", str(setup.seed)) if setup.seed is not None and takes_seed else ()
        with running_fabric(setup.topo, target=setup.target, policy=setup.policy, rate_scale=setup.rate_scale,
                            queue_depth=setup.queue_depth, log_dir=str(out_dir / "switch-logs"), progress=say,
                            switch_args=switch_args,
                            program=INC_PROGRAM if needs_inc(setup.plan) else DEFAULT_PROGRAM) as running:
            yield EmulatedSession(running, setup.rate_scale)


def run_emulated_trial(setup: TrialSetup, out_dir: Path, progress: Callable[[str], None] | None = None) -> TrialResult:
    """One trial on an emulated fabric (namespaces, switch processes, the replay engine): `run_trial` on it."""
    return run_trial(setup, out_dir, progress, EmulatedClock())
