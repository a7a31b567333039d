"""The fabric application: connect to every switch, push the pipeline, install routes and the policy, and
keep the fabric working while links fail and switches restart.

It speaks to `p4src/ethplus.p4` through the names in `docs/ethplus-header.md` (one place below,
`_desired`), and keeps, per switch, which candidate-port set each group id stands for, so a failure only
rewrites what changed: liveness first (the data plane skips a dead port at once), then the routes.
Background helpers (controller/watch.py) notice switch restarts and port status changes; every change of
forwarding state runs under one lock.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
from p4.v1 import p4runtime_pb2 as pb

from controller.artifacts import PipelineArtifacts
from controller.bmv2 import Bmv2Cli
from controller.client import SwitchConnection, as_entity
from controller.errors import ControllerError
from controller.policies import Policy
from controller.probes import PROBE_MGRP, probe_flood_ports
from controller.reconcile import diff, read_state
from controller.routing import SwitchRoutes, compute_routes
from topologies.model import Topology

log = logging.getLogger("ethlab.controller")
T = TypeVar("T")
ECMP_PROFILE = "ecmp_selector"


def config_cookie(artifacts: PipelineArtifacts) -> int:
    """64-bit fingerprint of P4Info + device config: a switch holding it already runs this pipeline."""
    digest = hashlib.sha256(artifacts.p4info.SerializeToString(deterministic=True) + artifacts.device_config)
    return int.from_bytes(digest.digest()[:8], "big") or 1


@dataclass
class InstalledState:
    """What one switch holds now: group id per candidate set, group id per destination."""

    group_ids: dict[tuple[int, ...], int] = field(default_factory=dict)
    route_group: dict[int, int] = field(default_factory=dict)
    members: set[int] = field(default_factory=set)
    entries: int = 0


@dataclass(frozen=True)
class ControllerEvent:
    """Something the controller noticed or did on its own (switch lost/recovered, port down/up)."""

    at: float  # time.monotonic()
    kind: str
    switch: str
    detail: str = ""


class FabricController:
    def __init__(self, topo: Topology, addresses: dict[str, str], artifacts: PipelineArtifacts,
                 policy: Policy, election_id: int = 1, workers: int = 8, watch_switches: bool = True,
                 port_poll_s: float | None = 1.0, recover_timeout_s: float = 60.0,
                 thrift_ports: dict[str, int] | None = None) -> None:
        self.topo = topo
        self.addresses = addresses
        self.artifacts = artifacts
        self.policy = policy
        self.election_id = election_id
        self.workers = workers
        self.watch_switches = watch_switches
        self.port_poll_s = port_poll_s
        self.recover_timeout_s = recover_timeout_s
        self.cookie = config_cookie(artifacts)
        self.thrift_ports = dict(thrift_ports or {})  # BMv2: registers and queues go over Thrift
        self.connections: dict[str, SwitchConnection] = {}
        self.installed: dict[str, InstalledState] = {}
        self.dead_links: set[int] = set()
        self.down_switches: set[str] = set()
        self.timings: dict[str, float] = {}
        self.written: dict[str, int] = {}  # updates written per switch since start
        self.pushed: set[str] = set()  # switches whose pipeline this controller pushed
        self.reconciled: dict[str, dict[str, int]] = {}  # per switch: insert/modify/delete/unchanged counts
        self.events: list[ControllerEvent] = []
        # (node, port) -> index of the link on that port, for port status and liveness.
        self.port_links = {(end.owner, end.number): i for i, ln in enumerate(topo.links) for end in (ln.a, ln.b)}
        self.lock = threading.RLock()  # serialises every change of forwarding state
        self._watchers: list[Any] = []
        self.progress: Callable[[str], None] = lambda _msg: None  # e.g. `ethlab up`'s status line
        policy.bind(self)

    # ---- lifecycle -------------------------------------------------------------------------------------
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

    def _timed(self, phase: str, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        try:
            return fn()
        finally:
            self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - start

    def event(self, kind: str, switch: str, detail: str = "") -> None:
        self.events.append(ControllerEvent(time.monotonic(), kind, switch, detail))
        log.info("%s %s %s", kind, switch, detail)

    def new_connection(self, name: str, timeout: float = 10.0) -> SwitchConnection:
        """An unconnected session; on BMv2 with the Thrift side for registers and queues."""
        conn = SwitchConnection(self.addresses[name], device_id=self.topo.nodes[name].device_id or 0,
                                timeout=timeout, p4info=self.artifacts.p4info, election_id=self.election_id,
                                name=name)
        if self.artifacts.target == "bmv2":
            conn.bmv2 = Bmv2Cli(self.thrift_ports.get(name), name=name)
        return conn

    def _connection(self, name: str, timeout: float = 10.0) -> SwitchConnection:
        conn = self.new_connection(name, timeout).connect()
        if not conn.is_primary:
            conn.close()
            raise RuntimeError("another controller is primary for this switch")
        return conn

    def connect(self) -> None:
        self.connections = self._timed("connect", lambda: self._each(self._connection))

    def push_pipelines(self, names: Iterable[str] | None = None) -> None:
        self._timed("pipeline", lambda: self._each(self._push, names))

    def _push(self, name: str) -> None:
        self.connections[name].set_pipeline(self.artifacts.device_config, self.artifacts.p4info, cookie=self.cookie)
        self.pushed.add(name)

    def install(self) -> int:
        """Compute routes for the whole fabric and write every switch's tables; returns entries written."""
        routes = compute_routes(self.topo, self.all_dead_links())
        written = self._timed("entries", lambda: self._each(lambda n: self._install_switch(n, routes[n])))
        return sum(written.values())

    def reconcile(self) -> int:
        """Adopt switches that may already be programmed: keep a pipeline with our cookie, read the tables,
        write only what differs. Switches without our pipeline are pushed and installed from scratch."""
        routes = compute_routes(self.topo, self.all_dead_links())
        return sum(self._each(lambda n: self._reconcile_switch(n, routes[n])).values())

    def start(self, reconcile: bool = False) -> int:
        """connect + (push + install | reconcile) + policy + watchers; returns the updates written."""
        self.progress(f"connecting to {len(self.addresses)} switches")
        self.connect()
        if reconcile:
            self.progress("reading switch state and reconciling")
            total = self._timed("reconcile", self.reconcile)
        else:
            self.progress(f"pushing the pipeline to {len(self.addresses)} switches")
            self.push_pipelines()
            self.progress("computing routes and installing tables")
            total = self.install()
        self.policy.start(self)
        self._start_watchers()
        return total

    def _start_watchers(self) -> None:
        from controller.watch import PortMonitor, SwitchWatcher

        if self.watch_switches:
            watcher = SwitchWatcher(self)
            for conn in self.connections.values():
                conn.on_lost = watcher.notify
            self._watchers.append(watcher.start())
        if self.port_poll_s and self.artifacts.target == "bmv2":
            self.event("port_monitor_off", "*", "BMv2 reports no port status over P4Runtime; "
                       "link_down()/link_up() still fail links over")
        elif self.port_poll_s:
            self._watchers.append(PortMonitor(self, self.port_poll_s).start())

    def close(self) -> None:
        for watcher in self._watchers:
            watcher.stop()
        self._watchers.clear()
        self.policy.stop()
        for conn in self.connections.values():
            conn.on_lost = None
            conn.close()
        self.connections.clear()

    def __enter__(self) -> FabricController:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def live_switches(self) -> list[str]:
        return [n for n in self.connections if n not in self.down_switches]

    # ---- tables ---------------------------------------------------------------------------------------
    def _write(self, name: str, updates: list[pb.Update]) -> int:
        if updates:
            self.connections[name].write(updates)
        self.written[name] = self.written.get(name, 0) + len(updates)
        return len(updates)

    def _desired(self, name: str, routes: SwitchRoutes) -> tuple[InstalledState, list[pb.Update]]:
        """Every entity the switch should hold for these routes and the policy, as the updates that
        install it on an empty switch (the lb_config default entry is a MODIFY), and the group bookkeeping
        that goes with them. Messages are built in place: at 70k entries every copy costs seconds."""
        conn = self.connections[name]
        state = InstalledState()
        updates = list(self._group_updates(conn, state, routes.groups.values()))
        for route in routes.routes:
            gid = state.group_ids[routes.groups[route.group_id]]
            state.route_group[route.eid] = gid
            updates += self._route_updates(conn, route.eid, route.ipv4, gid, pb.Update.INSERT)
        for port, (src, dst) in routes.neighbor_macs.items():
            conn.table_entry("neighbor_mac", {"standard_metadata.egress_port": port}, "set_macs",
                             {"src_mac": src, "dst_mac": dst}, into=_new(updates).entity.table_entry)
            ecn = self.policy.ecn_for_port(name, port)
            if ecn is not None:
                conn.table_entry("ecn_config", {"standard_metadata.egress_port": port}, "set_ecn_thresholds",
                                 ecn.params(), into=_new(updates).entity.table_entry)
        params = self.policy.lb_params()
        flood = probe_flood_ports(self.topo, name) if self.policy.uses_probes else []
        if flood:
            params["probe_mgrp"] = PROBE_MGRP
            updates.append(_insert(conn.multicast_group(PROBE_MGRP, flood)))
        conn.table_entry("lb_config", action="set_lb_config", params=params, default=True,
                         into=_new(updates, pb.Update.MODIFY).entity.table_entry)
        trim = self.policy.trim_params()
        if trim is not None:
            conn.table_entry("trim_config", action="set_trim", params=trim, default=True,
                             into=_new(updates, pb.Update.MODIFY).entity.table_entry)
        return state, updates

    def _install_switch(self, name: str, routes: SwitchRoutes) -> int:
        state, updates = self._desired(name, routes)
        try:
            self._write(name, updates)
        except ControllerError as err:
            if err.code not in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
                raise
            # The switch may have applied part of it: find out by reading, and write only the rest.
            self.event("install_retry", name, str(err))
            return self._reconcile_switch(name, routes)
        self.installed[name] = state
        state.entries = len(updates)
        self._apply_liveness(name)
        return len(updates)

    def _reconcile_switch(self, name: str, routes: SwitchRoutes) -> int:
        conn = self.connections[name]
        if conn.pipeline_cookie() != self.cookie:
            self.event("pipeline_pushed", name, "no pipeline or a different one")
            self._push(name)
            return self._install_switch(name, routes)
        state, updates = self._desired(name, routes)
        entities = [u.entity for u in updates]
        change = diff(entities, read_state(conn, entities))
        self._write(name, change.inserts)
        self._write(name, change.modifies)
        self._write(name, change.deletes)
        self.reconciled[name] = {"insert": len(change.inserts), "modify": len(change.modifies),
                                 "delete": len(change.deletes), "unchanged": change.unchanged}
        state.entries = len(entities)
        self.installed[name] = state
        self.event("reconciled", name, f"{len(change)} written, {change.unchanged} already right")
        self._apply_liveness(name)
        return len(change)

    def _group_updates(self, conn: SwitchConnection, state: InstalledState,
                       port_sets: Iterable[tuple[int, ...]]) -> Iterable[pb.Update]:
        """Members, selector group, ECMP entry and candidate list for every candidate set not yet installed."""
        for ports in port_sets:
            if ports in state.group_ids or not ports:
                continue
            gid = max(state.group_ids.values(), default=0) + 1
            state.group_ids[ports] = gid
            for port in ports:
                if port not in state.members:
                    state.members.add(port)
                    update = pb.Update(type=pb.Update.INSERT)
                    conn.member(ECMP_PROFILE, port, "ecmp_set_port", {"port": port},
                                into=update.entity.action_profile_member)
                    yield update
            update = pb.Update(type=pb.Update.INSERT)
            conn.group(ECMP_PROFILE, gid, ports, max_size=8, into=update.entity.action_profile_group)
            yield update
            update = pb.Update(type=pb.Update.INSERT)
            conn.table_entry("ecmp_group", {"meta.group_id": gid}, group_id=gid, into=update.entity.table_entry)
            yield update
            padded = list(ports) + [0] * (8 - len(ports))
            params = {"n_ports": len(ports), **{f"port{i}": p for i, p in enumerate(padded)}}
            update = pb.Update(type=pb.Update.INSERT)
            conn.table_entry("nhop_group", {"meta.group_id": gid}, "set_candidates", params,
                             into=update.entity.table_entry)
            yield update

    def _route_updates(self, conn: SwitchConnection, eid: int, ipv4: str, gid: int, kind: int) -> list[pb.Update]:
        params = {"group_id": gid, "dst_index": eid}
        by_eid, by_ip = pb.Update(type=kind), pb.Update(type=kind)
        conn.table_entry("eid_table", {"hdr.ethplus.dst_id": eid}, "eid_to_group", params,
                         into=by_eid.entity.table_entry)
        conn.table_entry("ipv4_lpm", {"hdr.ipv4.dstAddr": f"{ipv4}/32"}, "ipv4_to_group", params,
                         into=by_ip.entity.table_entry)
        return [by_eid, by_ip]

    # ---- failures -------------------------------------------------------------------------------------
    def all_dead_links(self) -> set[int]:
        """Links routes must avoid: failed ones and every link of a switch that is down."""
        dead = set(self.dead_links)
        for index, link in enumerate(self.topo.links):
            if link.a.owner in self.down_switches or link.b.owner in self.down_switches:
                dead.add(index)
        return dead

    def set_port_liveness(self, switch: str, port: int, up: bool) -> None:
        self.connections[switch].write_register("port_down", port, 0 if up else 1)

    def _apply_liveness(self, name: str) -> None:
        """After a (re)install the switch's own port_down reflects carrier only: re-mark failed links and
        links towards switches that are down."""
        dead = self.all_dead_links()
        if not dead:
            return
        for port in self.topo.ports(name):
            if self.port_links[(name, port)] in dead:
                self.set_port_liveness(name, port, False)

    def link_index(self, a: str, b: str) -> int:
        for index, link in enumerate(self.topo.links):
            if {link.a.owner, link.b.owner} == {a, b}:
                return index
        raise KeyError(f"no link between {a} and {b}")

    def link_down(self, a: str, b: str) -> float:
        """Flip liveness at both ends at once, then reroute around the link; returns the seconds it took."""
        return self.link_change(self.link_index(a, b), up=False)

    def link_up(self, a: str, b: str) -> float:
        return self.link_change(self.link_index(a, b), up=True)

    def link_change(self, index: int, up: bool, source: str = "api") -> float:
        start = time.perf_counter()
        with self.lock:
            link = self.topo.links[index]
            changed = (index in self.dead_links) == up
            (self.dead_links.discard if up else self.dead_links.add)(index)
            for end in (link.a, link.b):
                if end.owner in self.connections and end.owner not in self.down_switches:
                    self.set_port_liveness(end.owner, end.number, up)
            if changed:
                self.event("link_up" if up else "link_down", f"{link.a.owner}-{link.b.owner}", source)
                self.reroute()
        return time.perf_counter() - start

    def reroute(self) -> int:
        """Recompute routes and rewrite only the destinations whose candidate set changed."""
        with self.lock:
            routes = compute_routes(self.topo, self.all_dead_links())

            def one(name: str) -> int:
                conn, state, new = self.connections[name], self.installed[name], routes[name]
                updates = list(self._group_updates(conn, state, new.groups.values()))
                for route in new.routes:
                    ports = new.groups[route.group_id]
                    gid = state.group_ids.get(ports)
                    if gid is None or state.route_group.get(route.eid) == gid:
                        continue
                    state.route_group[route.eid] = gid
                    updates += self._route_updates(conn, route.eid, route.ipv4, gid, pb.Update.MODIFY)
                return self._write(name, updates)

            return sum(self._each(one, [n for n in self.live_switches() if n in self.installed]).values())


def _entity(message: Any) -> pb.Entity:
    return as_entity(message)


def _insert(message: Any) -> pb.Update:
    return pb.Update(type=pb.Update.INSERT, entity=_entity(message))


def _new(updates: list[pb.Update], kind: int = pb.Update.INSERT) -> pb.Update:
    """Append an empty update of `kind` and return it, to be filled in place."""
    update = pb.Update(type=kind)
    updates.append(update)
    return update
