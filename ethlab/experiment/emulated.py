"""The emulated clock of a trial: Mininet namespaces, switch processes and the replay engine on sockets, in
wall-clock time (`ClockSession` of ethlab/experiment/trial.py). The switch logs land in the trial's directory."""

from __future__ import annotations

import json
import os
import signal
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
from linklayer import LinkCounters, LinkLayerConfig
from linklayer.shim import SHIM_BYTES
from topologies.model import Topology
from traffic.engine import NicLinkLayer
from traffic.inc.jobs import INC_PROGRAM, needs_inc, plan_jobs, setup_jobs
from traffic.replay import ports_for_topology, replay

#: How much slower than nominal an emulated fabric's link-layer timers run when its rates are not scaled: a
#: Python switch forwards in tens of µs where a chip takes hundreds of ns, and a loaded host adds milliseconds
#: (a 5 µs replay timeout becomes 50 ms, an ACK delay of 1 µs 10 ms).
UNSCALED_SLOWDOWN = 10_000.0
STATS_WAIT_S = 5.0


def emulated_link_layer(cfg: LinkLayerConfig, rate_scale: float | None) -> LinkLayerConfig:
    """The nominal time constants stretched as the emulated links are slowed (1 / rate_scale)."""
    return cfg.scaled(1.0 / rate_scale if rate_scale else UNSCALED_SLOWDOWN)


def host_port_names(topo: Topology) -> dict[tuple[int, int], str]:
    """(endpoint, plane) -> "host:port" of its link end (link errors are keyed by it in both clocks)."""
    eid_of = {ep.host: ep.eid for ep in topo.endpoints.values()}
    names = {}
    for ln in topo.links:
        for end in (ln.a, ln.b):
            if end.owner in eid_of:
                names[(eid_of[end.owner], ln.plane)] = f"{end.owner}:{end.number}"
    return names


def host_port_rates(topo: Topology, rate_scale: float | None) -> dict[tuple[int, int], float]:
    """(endpoint, plane) -> its link's emulated rate (nominal x rate_scale, what the switch's queue serves at):
    PFC's pause quanta are bit times of the link, so the NIC must time them as the switch does. Empty when the
    fabric is not rate-scaled (both ends then use one default rate)."""
    if not rate_scale:
        return {}
    eid_of = {ep.host: ep.eid for ep in topo.endpoints.values()}
    return {(eid_of[end.owner], ln.plane): ln.rate_gbps * 1e9 * rate_scale
            for ln in topo.links for end in (ln.a, ln.b) if end.owner in eid_of}


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
        link = (NicLinkLayer(emulated_link_layer(setup.link_layer, setup.rate_scale), host_port_names(setup.topo),
                             setup.seed or 0, rates=host_port_rates(setup.topo, setup.rate_scale))
                if setup.link_layer.active else None)
        t0 = time.monotonic()
        if setup.sample_interval_s:
            sampler.start()
        injector.start()
        try:
            result, metrics = replay(setup.plan, ports, setup.engine, out_dir, link)
        finally:
            events = events_dicts(finish_faults(injector, running))
            if setup.sample_interval_s:
                sampler.stop()
        # Utilisation over the engine's own send/receive window (not its socket and frame set-up).
        duration = result.duration_s or (time.monotonic() - t0)
        counters = None
        if link is not None:
            counters = self.switch_link_counters(setup.topo)
            counters.update({(name.split(":")[0], int(name.split(":")[1])): lp.counters
                             for key, lp in link.ports.items() for name in [link.names.get(key, "?:0")]})
        return Replayed(metrics, duration, events, sampler, sampler.interval_s, counters)

    def switch_link_counters(self, topo: Topology) -> dict[tuple[str, int], LinkCounters]:
        """Every switch's link-layer counters: each process writes its stats file on SIGUSR1 (bounded wait)."""
        out: dict[tuple[str, int], LinkCounters] = {}
        fabric = self.running.fabric
        for node in topo.switches:
            sw = fabric.switch(node.name)
            path = sw.log_dir / f"{node.name}.stats.json"
            before = path.stat().st_mtime_ns if path.exists() else 0
            proc = sw.proc
            if proc is None or proc.poll() is not None:
                continue
            os.kill(proc.pid, signal.SIGUSR1)
            deadline = time.monotonic() + STATS_WAIT_S
            while time.monotonic() < deadline and (not path.exists() or path.stat().st_mtime_ns == before):
                time.sleep(0.02)
            try:
                ports = json.loads(path.read_text()).get("link_layer", {})
            except (OSError, ValueError):
                continue
            for port, values in ports.items():
                out[(node.name, int(port))] = LinkCounters(**values)
        return out

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
    """Bring the fabric up in namespaces for the trial and tear it down after. `pcap_dir`: every switch writes
    IFACE_in.pcap and IFACE_out.pcap of each of its ports there (docs/switch.md), link control frames too."""

    pcap_dir: Path | None = None

    @contextmanager
    def session(self, setup: TrialSetup, out_dir: Path, say: Callable[[str], None]) -> Iterator[EmulatedSession]:
        takes_seed = target_named(setup.target).takes_seed
        switch_args: tuple[str, ...] = (("--seed", str(setup.seed)) if setup.seed is not None and takes_seed
                                        else ())
        if self.pcap_dir is not None:
            switch_args += (f"--pcap={self.pcap_dir}",)  # an implicit-value option: one word
        link_mtu = None
        if setup.link_layer.active:  # every switch port runs it (its peer, a switch or a host NIC, too)
            cfg = emulated_link_layer(setup.link_layer, setup.rate_scale)
            switch_args += ("--link-layer", json.dumps(cfg.to_raw(), separators=(",", ":")))
            link_mtu = max(1500, setup.engine.mtu) + SHIM_BYTES if setup.link_layer.llr.enabled else None
        with running_fabric(setup.topo, target=setup.target, policy=setup.policy, rate_scale=setup.rate_scale,
                            queue_depth=setup.queue_depth, log_dir=str(out_dir / "switch-logs"), progress=say,
                            switch_args=switch_args, link_mtu=link_mtu,
                            program=INC_PROGRAM if needs_inc(setup.plan) else DEFAULT_PROGRAM) as running:
            yield EmulatedSession(running, setup.rate_scale)


def run_emulated_trial(setup: TrialSetup, out_dir: Path, progress: Callable[[str], None] | None = None,
                       pcap_dir: Path | None = None) -> TrialResult:
    """One trial on an emulated fabric (namespaces, switch processes, the replay engine): `run_trial` on it;
    `pcap_dir`: the switches capture every port there."""
    return run_trial(setup, out_dir, progress, EmulatedClock(pcap_dir))
