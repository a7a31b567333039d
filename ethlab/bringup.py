"""Bring a whole emulated fabric up: namespaces and links (Mininet), switch processes, P4Runtime control plane.

`running_fabric()` is the one context manager every command and test uses, so a failure at any phase still
tears down everything created before it.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.artifacts import DEFAULT_PROGRAM
from controller.client import SwitchConnection
from controller.fabric import FabricController
from controller.policies import Policy, make_policy
from controller.targets import P4EXEC, TARGETS, Target, target_named
from p4exec.switch.forkserver import ForkedProcess
from topologies.mininet_builder import Fabric, FabricOptions
from topologies.model import Topology
from topologies.ping import ping_many

__all__ = ["TARGETS", "Reachability", "RunningFabric", "check_reachability", "running_fabric"]


@dataclass
class Reachability:
    """Pings sent per plane and which (src, dst, plane) failed."""

    tried: dict[int, int] = field(default_factory=dict)
    failed: list[tuple[str, str, int]] = field(default_factory=list)
    retried: int = 0  # pairs that failed the first, short ping and were tried again

    @property
    def ok(self) -> bool:
        return not self.failed and sum(self.tried.values()) > 0


@dataclass
class RunningFabric:
    """A fabric that is up, and what experiments and faults may do to it: its verbs. Callers never reach
    into switch processes, addresses or controller sessions themselves."""

    topo: Topology
    fabric: Fabric
    controller: FabricController
    entries: int
    timings: dict[str, float]
    target: Target = P4EXEC
    cpu_timings: dict[str, float] = field(default_factory=dict)  # CPU s of our process tree, per phase
    frozen: set[str] = field(default_factory=set)  # switches stopped with SIGSTOP: nobody may read them
    failed_links: set[int] = field(default_factory=set)  # failed by the target's link_state: undone at teardown

    # ---- links -----------------------------------------------------------------------------------------
    def _switch_ends(self, a: str, b: str) -> list[tuple[str, int]]:
        link = self.topo.links[self.controller.link_index(a, b)]
        return [(end.owner, end.number) for end in (link.a, link.b) if self.topo.nodes[end.owner].is_switch]

    def _set_link(self, a: str, b: str, up: bool) -> int:
        """The target's way to fail or restore a link (BMv2: none of its interfaces goes down)."""
        if self.target.link_state is None:
            return self.fabric.set_link(a, b, up=up)
        index = self.controller.link_index(a, b)
        self.target.link_state(self.fabric.link_ifnames(index), up)
        (self.failed_links.discard if up else self.failed_links.add)(index)
        return index

    def restore_failed_links(self) -> None:
        """Before teardown: what the target's link_state left behind (BMv2: its nftables cut tables)."""
        for index in sorted(self.failed_links):
            if self.target.link_state is not None:
                try:
                    self.target.link_state(self.fabric.link_ifnames(index), True)
                except Exception:  # noqa: BLE001 - teardown goes on; the interfaces go with the fabric
                    pass
        self.failed_links.clear()

    def link_down(self, a: str, b: str) -> float:
        """A real failure: the link's cable is pulled (p4exec: both ends down, the switches see carrier loss;
        BMv2: controller/bmv2_ports.py), then the controller reroutes around it; returns the controller's
        seconds."""
        return self.controller.link_change(self._set_link(a, b, up=False), up=False)

    def link_up(self, a: str, b: str) -> float:
        return self.controller.link_change(self._set_link(a, b, up=True), up=True)

    # ---- queues ----------------------------------------------------------------------------------------
    def queue_rate_pps(self, switch: str, port: int) -> float:
        """The rate the port's queue was configured with at bring-up (0 = unlimited)."""
        return self.fabric.switch(switch).queue_rates_pps.get(port, 0.0)

    def link_queues(self, a: str, b: str) -> list[tuple[str, int]]:
        """The switch ports (switch, port) that serve link a-b."""
        return self._switch_ends(a, b)

    def set_queue(self, switch: str, port: int, rate_pps: float | None = None, depth: int | None = None) -> None:
        """Change one egress queue through the target's own channel, so it works with the controller down."""
        self.target.queue_channel(self.fabric.switch(switch)).set_queue(port, depth=depth, rate_pps=rate_pps)

    # ---- switch processes ------------------------------------------------------------------------------
    def _process(self, switch: str) -> subprocess.Popen[bytes] | ForkedProcess:
        proc = self.fabric.switch(switch).proc
        if proc is None:
            raise RuntimeError(f"switch {switch} has no process")
        return proc

    def freeze_switch(self, switch: str) -> None:
        """SIGSTOP: its links stay up but it forwards and answers nothing — a hung switch."""
        self.frozen.add(switch)
        self._process(switch).send_signal(signal.SIGSTOP)

    def thaw_switch(self, switch: str) -> None:
        self._process(switch).send_signal(signal.SIGCONT)
        self.frozen.discard(switch)

    def stop_switch(self, switch: str) -> None:
        """Stop the switch process as an operator would (SIGTERM, bounded): the controller sees it go."""
        self.fabric.switch(switch).stop_process()

    def start_switch(self, switch: str, timeout_s: float = 30.0) -> None:
        """Start a stopped (or crashed) switch process again with its original options, empty; the
        controller's switch watcher notices it back and re-pushes and re-populates it."""
        sw = self.fabric.switch(switch)
        sw.start([])
        sw.wait_ready(timeout_s)

    def kill_switch(self, switch: str) -> None:
        """SIGKILL: the switch process dies as in a crash (the controller notices its stream end)."""
        proc = self._process(switch)
        proc.kill()
        proc.wait(5)

    def dead_switches(self) -> dict[str, str]:
        """Switches whose process has exited, with its status and log tail."""
        return self.fabric.dead_switches()

    def readable(self) -> dict[str, SwitchConnection]:
        """Sessions of the switches that can be read now: managed, not frozen, process alive."""
        dead = self.dead_switches()
        return {n: c for n, c in sorted(self.controller.live_connections().items())
                if n not in self.frozen and n not in dead}


@contextmanager
def running_fabric(topo: Topology, target: str = "p4exec", policy: Policy | str = "ecmp",
                   program: Path = DEFAULT_PROGRAM, rate_scale: float | None = None,
                   queue_depth: int | None = None, log_dir: str | None = None,
                   progress: Callable[[str], None] | None = None,
                   switch_args: tuple[str, ...] = (),
                   controller_options: dict[str, Any] | None = None,
                   label: str = "", fork_switches: bool = True,
                   link_mtu: int | None = None) -> Iterator[RunningFabric]:
    """Build, start, push and install; yield the running fabric; always tear down.

    `switch_args`: extra target options for every switch process (e.g. p4exec's `--seed N`).
    `controller_options`: keyword arguments for FabricController (e.g. `port_poll_s=None` to turn the port
    status monitor off, `watch_switches=False`, `workers=4`).
    `label`: recorded with the run, so `ethlab down` stops only the fabrics `ethlab up` made.
    `fork_switches=False`: start every p4exec switch as its own process from scratch (the slower way, for
    comparison: bench/bringup.py --baseline). `link_mtu`: the veths' MTU (room for the link layer's shim)."""
    say = progress or (lambda _msg: None)
    spec = target_named(target)
    policy = make_policy(policy) if isinstance(policy, str) else policy
    t0 = time.monotonic()
    say(f"compiling {program.name} for {target}")
    artifacts = spec.compile(program)
    compile_s = time.monotonic() - t0
    params = spec.switch_params()
    if switch_args:
        params["extra_args"] = tuple(switch_args)
    options = FabricOptions(switch_cls=spec.switch_cls, rate_scale=rate_scale, queue_depth=queue_depth,
                            log_dir=log_dir, switch_params=params, label=label,
                            preload_config=artifacts.device_config, fork_switches=fork_switches,
                            link_mtu=link_mtu)
    say(f"creating {len(topo.hosts)} hosts and {len(topo.links)} links")
    with Fabric(topo, options) as fabric:
        say(f"starting {len(topo.switches)} {target} switches")
        fabric.start()
        ctl_options = dict(controller_options or {})
        side = spec.side_ports({n.name: fabric.switch(n.name) for n in topo.switches})
        if side:  # BMv2: registers and queues over Thrift (PI's P4Runtime server lacks them)
            ctl_options.setdefault("thrift_ports", side)
        controller = FabricController(topo, fabric.grpc_addrs(), artifacts, policy, **ctl_options)
        controller.progress = say
        running: RunningFabric | None = None
        try:
            entries = controller.start()
            timings = {"compile": round(compile_s, 3), **fabric.timings,
                       **{k: round(v, 3) for k, v in controller.state.timings.items()}}
            cpu = {**fabric.cpu_timings, **{k: round(v, 2) for k, v in controller.cpu_timings.items()}}
            running = RunningFabric(topo, fabric, controller, entries, timings, spec, cpu_timings=cpu)
            yield running
        finally:
            if running is not None:
                running.restore_failed_links()
            # Tests and tools may swap in another controller (e.g. a reconciling one): close that one too.
            if running is not None and running.controller is not controller:
                running.controller.close()
            controller.close()


def check_reachability(running: RunningFabric, per_host: int | None = None, seed: int = 1,
                       timeout_s: float = 2.0, retries: int = 1, retry_timeout_s: float = 5.0) -> Reachability:
    """Ping from every host to every other host (or `per_host` sampled ones) on every plane, all hosts at once.

    With hundreds of hosts pinging at the same moment on 2 cores, a first echo can miss its short deadline
    although the path works; pairs that failed are pinged again (`retries` times, `retry_timeout_s` each).
    `Reachability.retried` counts the pairs that needed it."""
    topo = running.topo
    rng = random.Random(seed)
    result = Reachability()
    targets: dict[str, list[tuple[str, int, str]]] = {}
    for src, ep in topo.endpoints.items():
        for plane, _itf in ep.interfaces.items():
            peers = [(dst, other.interfaces[plane].ipv4) for dst, other in topo.endpoints.items()
                     if dst != src and plane in other.interfaces]
            if per_host is not None and len(peers) > per_host:
                peers = rng.sample(peers, per_host)
            targets.setdefault(src, []).extend((dst, plane, ip) for dst, ip in peers)
            result.tried[plane] = result.tried.get(plane, 0) + len(peers)
    failed = _ping_all(running, targets, timeout_s, window=2)
    for _ in range(retries):
        if not failed:
            break
        result.retried += len(failed)
        again: dict[str, list[tuple[str, int, str]]] = {}
        for src, dst, plane in failed:
            again.setdefault(src, []).append((dst, plane, topo.endpoints[dst].interfaces[plane].ipv4))
        failed = _ping_all(running, again, retry_timeout_s, window=1)
    result.failed = failed
    return result


def _ping_all(running: RunningFabric, targets: dict[str, list[tuple[str, int, str]]],
              timeout_s: float, window: int = 4) -> list[tuple[str, str, int]]:
    """One echo request per target from every source host at once (this process, raw sockets inside the
    hosts' namespaces: no ping process per pair); returns the failures."""
    by_netns = {running.fabric.netns(src): [ip for _dst, _plane, ip in items] for src, items in targets.items()}
    missing = ping_many(by_netns, timeout_s=timeout_s, window=window)
    failed: list[tuple[str, str, int]] = []
    for src, items in targets.items():
        lost = missing.get(running.fabric.netns(src), set())
        failed += [(src, dst, plane) for dst, plane, ip in items if ip in lost]
    return failed
