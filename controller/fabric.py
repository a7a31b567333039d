"""The fabric application as one state machine: connect to every switch, push the pipeline, install routes
and the policy, and keep the fabric working while links fail and switches restart.

All it knows is one `FabricState` (controller/fabric_state.py); every change of it is a transition in this file,
run under one lock: start (install or reconcile), link down/up, switch lost, switch back, port changed,
probe due. Event sources (controller/watch.py) and policies feed it through the `FabricEvents` protocol
(controller/events.py) and never reach into it. Per switch it keeps which candidate-port set each group id
stands for, so a failure only rewrites what changed: liveness first (the data plane skips a dead port at
once), then the routes. What the tables hold is built by controller/tables.py.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import grpc
from p4.v1 import p4runtime_pb2 as pb

from controller.artifacts import PipelineArtifacts
from controller.client import SwitchConnection
from controller.errors import ControllerError
from controller.fabric_state import ControllerEvent, FabricState
from controller.inc import IncJobs
from controller.policies import Policy
from controller.probes import Probe, with_seq
from controller.reconcile import diff, read_state
from controller.routing import SwitchRoutes, compute_routes
from controller.tables import desired, reroute_updates
from controller.targets import target_named
from controller.watch import PortMonitor, SwitchWatcher
from topologies.cpu import tree_cpu_s
from topologies.model import Topology

log = logging.getLogger("ethlab.controller")
T = TypeVar("T")
LostHook = Callable[[SwitchConnection, str], None]


def config_cookie(artifacts: PipelineArtifacts) -> int:
    """64-bit fingerprint of P4Info + device config: a switch holding it already runs this pipeline."""
    digest = hashlib.sha256(artifacts.p4info.SerializeToString(deterministic=True) + artifacts.device_config)
    return int.from_bytes(digest.digest()[:8], "big") or 1


class FabricController:
    def __init__(self, topo: Topology, addresses: dict[str, str], artifacts: PipelineArtifacts,
                 policy: Policy, election_id: int = 1, workers: int = 8, watch_switches: bool = True,
                 port_poll_s: float | None = 1.0, recover_timeout_s: float = 60.0,
                 thrift_ports: dict[str, int] | None = None) -> None:
        self.addresses = addresses
        self.artifacts = artifacts
        self.target = target_named(artifacts.target)
        self.policy = policy
        self.election_id = election_id
        self.workers = workers
        self.watch_switches = watch_switches
        self.port_poll_s = port_poll_s
        self.recover_timeout_s = recover_timeout_s
        self.cookie = config_cookie(artifacts)
        self.thrift_ports = dict(thrift_ports or {})  # BMv2: the side channel for registers and queues
        self.state = FabricState(topo)
        self.lock = threading.RLock()  # serialises every transition
        self._sources: list[SwitchWatcher | PortMonitor] = []
        self._on_lost: LostHook | None = None  # the switch watcher's hook, set on every adopted session
        self.progress: Callable[[str], None] = lambda _msg: None  # e.g. `ethlab up`'s status line
        # CPU seconds per phase of the start-up, of this process and its descendants (the fabric's switch
        # processes among them): a shared machine's load affects it less than the wall times in state.timings
        self.cpu_timings: dict[str, float] = {}
        self.inc = IncJobs(self)  # in-network aggregation jobs (controller/inc.py; ethplus_inc.p4 only)
        policy.bind(self)

    # ---- what sources and policies may read (FabricEvents) ---------------------------------------------
    @property
    def topo(self) -> Topology:
        return self.state.topo

    def live_connections(self) -> dict[str, SwitchConnection]:
        with self.lock:
            return {n: c for n, c in self.state.connections.items() if n not in self.state.down_switches}

    def connection(self, name: str) -> SwitchConnection:
        """The session with one switch (KeyError when the controller holds none)."""
        return self.state.connections[name]

    def live_switches(self) -> list[str]:
        return self.state.live_switches()

    def note(self, kind: str, switch: str, detail: str = "") -> None:
        self.state.events.append(ControllerEvent(time.monotonic(), kind, switch, detail))
        log.info("%s %s %s", kind, switch, detail)

    def new_connection(self, name: str, timeout: float = 10.0) -> SwitchConnection:
        """An unconnected session, with the target's side channel when it has one (BMv2: Thrift)."""
        conn = SwitchConnection(self.addresses[name], device_id=self.topo.nodes[name].device_id or 0,
                                timeout=timeout, p4info=self.artifacts.p4info, election_id=self.election_id,
                                name=name)
        conn.bmv2 = self.target.side_channel(name, self.thrift_ports.get(name))
        return conn

    def open_connection(self, name: str, timeout: float = 10.0) -> SwitchConnection:
        conn = self.new_connection(name, timeout).connect()
        if not conn.is_primary:
            conn.close()
            raise RuntimeError("another controller is primary for this switch")
        return conn

    # ---- helpers ---------------------------------------------------------------------------------------
    def _each(self, fn: Callable[[str], T], names: Iterable[str] | None = None) -> dict[str, T]:
        """Run fn per switch concurrently; the first failure is re-raised with the switch's name."""
        names = list(names if names is not None else self.addresses)
        if not names:
            return {}
        with ThreadPoolExecutor(max_workers=max(1, min(self.workers, len(names)))) as pool:
            futures = {name: pool.submit(fn, name) for name in names}
        results: dict[str, T] = {}
        for name, future in futures.items():
            try:
                results[name] = future.result()
            except Exception as err:
                raise RuntimeError(f"switch {name}: {err}") from err
        return results

    def _timed(self, phase: str, fn: Callable[[], T]) -> T:
        start, cpu = time.perf_counter(), tree_cpu_s()
        try:
            return fn()
        finally:
            self.state.timings[phase] = self.state.timings.get(phase, 0.0) + time.perf_counter() - start
            self.cpu_timings[phase] = self.cpu_timings.get(phase, 0.0) + tree_cpu_s() - cpu

    def _routes(self) -> dict[str, SwitchRoutes]:
        return compute_routes(self.topo, self.state.all_dead_links())

    # ---- transitions: lifecycle -----------------------------------------------------------------------
    def start(self, reconcile: bool = False) -> int:
        """connect + (push + install | reconcile) + policy + event sources; returns the updates written."""
        with self.lock:
            self.progress(f"connecting to {len(self.addresses)} switches")
            self.state.connections = self._timed("connect", lambda: self._each(self.open_connection))
            if reconcile:
                self.progress("reading switch state and reconciling")
                self._timed("reconcile", lambda: self.inc.adopt([n for n in self.addresses if self._runs_ours(n)]))
                total = self._timed("reconcile", self.reconcile)
            else:
                self.progress(f"pushing the pipeline to {len(self.addresses)} switches")
                self._timed("pipeline", lambda: self._each(self._push))
                self.progress("computing routes and installing tables")
                routes = self._routes()
                total = sum(self._timed("entries", lambda: self._each(
                    lambda n: self._install_switch(n, routes[n]))).values())
        self.policy.start(self)
        self._start_sources()
        return total

    def reconcile(self) -> int:
        """Adopt every switch as it is: read, diff, write only the difference; returns the updates written."""
        with self.lock:
            routes = self._routes()
            return sum(self._each(lambda n: self._reconcile_switch(n, routes[n])).values())

    def _start_sources(self) -> None:
        if self.watch_switches:
            watcher = SwitchWatcher(self, self.recover_timeout_s)
            self._on_lost = watcher.notify
            with self.lock:
                for conn in self.state.connections.values():
                    conn.on_lost = watcher.notify
            self._sources.append(watcher.start())
        if self.port_poll_s and not self.target.reports_port_status:
            self.note("port_monitor_off", "*", f"{self.target.name} reports no port status over P4Runtime; "
                      "link_down()/link_up() still fail links over")
        elif self.port_poll_s:
            self._sources.append(PortMonitor(self, self.port_poll_s).start())

    def close(self) -> None:
        for source in self._sources:
            source.stop()
        self._sources.clear()
        self._on_lost = None
        self.policy.stop()
        with self.lock:
            for conn in self.state.connections.values():
                conn.on_lost = None
                conn.close()
            self.state.connections.clear()

    def __enter__(self) -> FabricController:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- steps of the transitions (called with the lock held) -----------------------------------------
    def _write(self, name: str, updates: list[pb.Update]) -> int:
        if updates:
            self.state.connections[name].write(updates)
        self.state.written[name] = self.state.written.get(name, 0) + len(updates)
        return len(updates)

    def _push(self, name: str) -> None:
        self.state.connections[name].set_pipeline(self.artifacts.device_config, self.artifacts.p4info,
                                                  cookie=self.cookie)
        self.state.pushed.add(name)

    def _runs_ours(self, name: str) -> bool:
        return self.state.connections[name].pipeline_cookie() == self.cookie

    def _install_switch(self, name: str, routes: SwitchRoutes) -> int:
        installed, updates = desired(self.state.connections[name], name, routes, self.policy, self.topo)
        updates += self.inc.updates(name, self.state.connections[name])
        try:
            self._write(name, updates)
        except ControllerError as err:
            if err.code not in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
                raise
            # The switch may have applied part of it: find out by reading, and write only the rest.
            self.note("install_retry", name, str(err))
            return self._reconcile_switch(name, routes)
        installed.entries = len(updates)
        self.state.installed[name] = installed
        self._apply_liveness(name)
        return len(updates)

    def _reconcile_switch(self, name: str, routes: SwitchRoutes) -> int:
        """Adopt a switch that may already be programmed: keep a pipeline with our cookie, read the tables,
        write only what differs. A switch without our pipeline is pushed and installed from scratch."""
        conn = self.state.connections[name]
        if conn.pipeline_cookie() != self.cookie:
            self.note("pipeline_pushed", name, "no pipeline or a different one")
            self._push(name)
            return self._install_switch(name, routes)
        installed, updates = desired(conn, name, routes, self.policy, self.topo)
        updates += self.inc.updates(name, conn)
        entities = [u.entity for u in updates]
        change = diff(entities, read_state(conn, entities))
        self._write(name, change.inserts)
        self._write(name, change.modifies)
        self._write(name, change.deletes)
        self.state.reconciled[name] = {"insert": len(change.inserts), "modify": len(change.modifies),
                                       "delete": len(change.deletes), "unchanged": change.unchanged}
        installed.entries = len(entities)
        self.state.installed[name] = installed
        self.note("reconciled", name, f"{len(change)} written, {change.unchanged} already right")
        self._apply_liveness(name)
        return len(change)

    def set_port_liveness(self, switch: str, port: int, up: bool) -> None:
        self.state.connections[switch].write_register("port_down", port, 0 if up else 1)

    def _apply_liveness(self, name: str) -> None:
        """After a (re)install the switch's own port_down reflects carrier only: re-mark failed links and
        links towards switches that are down."""
        dead = self.state.all_dead_links()
        if not dead:
            return
        for port in self.topo.ports(name):
            if self.state.port_links[(name, port)] in dead:
                self.set_port_liveness(name, port, False)

    def _neighbour_liveness(self, name: str, up: bool) -> None:
        """Mark the ports that face `name` on its neighbours (links that are not failed for other reasons)."""
        for port, link in self.topo.ports(name).items():
            far = link.other(name)
            if not self.state.is_live(far.owner):
                continue
            if up and self.state.port_links[(name, port)] in self.state.dead_links:
                continue
            try:
                self.set_port_liveness(far.owner, far.number, up)
            except Exception as err:  # noqa: BLE001 - the neighbour may be restarting too
                log.warning("liveness %s:%d: %s", far.owner, far.number, err)

    def reroute(self) -> int:
        """Recompute routes and rewrite only the destinations whose candidate set changed."""
        with self.lock:
            routes = self._routes()

            def one(name: str) -> int:
                conn = self.state.connections[name]
                return self._write(name, reroute_updates(conn, self.state.installed[name], routes[name]))

            names = [n for n in self.state.live_switches() if n in self.state.installed]
            return sum(self._each(one, names).values())

    # ---- transitions: links ---------------------------------------------------------------------------
    def link_index(self, a: str, b: str) -> int:
        return self.topo.link_index(a, b)

    def link_down(self, a: str, b: str) -> float:
        """Flip liveness at both ends at once, then reroute around the link; returns the seconds it took."""
        return self.link_change(self.link_index(a, b), up=False)

    def link_up(self, a: str, b: str) -> float:
        return self.link_change(self.link_index(a, b), up=True)

    def link_change(self, index: int, up: bool, source: str = "api") -> float:
        start = time.perf_counter()
        with self.lock:
            link = self.topo.links[index]
            changed = (index in self.state.dead_links) == up
            (self.state.dead_links.discard if up else self.state.dead_links.add)(index)
            for end in (link.a, link.b):
                if self.state.is_live(end.owner):
                    self.set_port_liveness(end.owner, end.number, up)
            if changed:
                self.note("link_up" if up else "link_down", f"{link.a.owner}-{link.b.owner}", source)
                self.reroute()
        return time.perf_counter() - start

    def port_changed(self, switch: str, port: int, up: bool) -> None:
        index = self.state.port_links.get((switch, port))
        if index is None:
            return
        try:
            self.link_change(index, up, source=f"port status {switch}:{port}")
        except Exception as err:  # noqa: BLE001 - the source keeps polling
            self.note("port_change_failed", switch, f"port {port}: {err}")

    # ---- transitions: switches ------------------------------------------------------------------------
    def switch_lost(self, switch: str, reason: str) -> bool:
        with self.lock:
            if reason == "primary role lost":
                self.note("primary_lost", switch, "another controller took over; not managed any more")
                self.state.down_switches.add(switch)
                return False
            if switch in self.state.down_switches:
                return False
            self.note("switch_lost", switch, reason)
            self.state.down_switches.add(switch)
            self._neighbour_liveness(switch, up=False)
            self.reroute()
            return True

    def switch_back(self, switch: str, conn: SwitchConnection) -> int:
        with self.lock:
            old = self.state.connections.get(switch)
            if old is not None:
                old.on_lost = None
                old.close()
            self.state.connections[switch] = conn
            self.state.down_switches.discard(switch)
            written = self._reconcile_switch(switch, self._routes()[switch])
            conn.on_lost = self._on_lost
            self._neighbour_liveness(switch, up=True)
            self.reroute()
            self.state.recoveries += 1
            self.note("switch_recovered", switch, f"{written} updates written")
            return written

    # ---- transitions: probes --------------------------------------------------------------------------
    def probe_due(self, probes: Sequence[Probe], seq: int) -> int:
        """Packet-out each probe from its switch if that switch is up. Not under the lock: it changes no
        state, and a probe round must not wait for a reroute."""
        sent = 0
        for probe in probes:
            conn = self.state.connections.get(probe.switch)
            if conn is None or probe.switch in self.state.down_switches or not conn.stream_alive():
                continue
            try:
                conn.packet_out(with_seq(probe.frame, seq), egress_port=probe.port)
                sent += 1
            except Exception as err:  # noqa: BLE001 - a probe lost is harmless; keep sending
                log.debug("probe to %s failed: %s", probe.switch, err)
        return sent
