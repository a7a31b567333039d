"""The fabric application: connect to every switch, push the pipeline, install routes and the policy.

It speaks to `p4src/ethplus.p4` through the names in `docs/ethplus-header.md` (one place below, `_entries`),
and keeps, per switch, which candidate-port set each group id stands for, so a failure only rewrites what
changed: liveness first (the data plane skips a dead port at once), then the routes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from p4.v1 import p4runtime_pb2 as pb

from controller.artifacts import PipelineArtifacts
from controller.client import SwitchConnection, as_entity
from controller.policies import Policy
from controller.routing import SwitchRoutes, compute_routes
from topologies.model import Topology

log = logging.getLogger("ethlab.controller")
T = TypeVar("T")
ECMP_PROFILE = "ecmp_selector"


@dataclass
class InstalledState:
    """What one switch holds now: group id per candidate set, group id per destination."""

    group_ids: dict[tuple[int, ...], int] = field(default_factory=dict)
    route_group: dict[int, int] = field(default_factory=dict)
    members: set[int] = field(default_factory=set)
    entries: int = 0


class FabricController:
    def __init__(self, topo: Topology, addresses: dict[str, str], artifacts: PipelineArtifacts,
                 policy: Policy, election_id: int = 1, workers: int = 8) -> None:
        self.topo = topo
        self.addresses = addresses
        self.artifacts = artifacts
        self.policy = policy
        self.election_id = election_id
        self.workers = workers
        self.connections: dict[str, SwitchConnection] = {}
        self.installed: dict[str, InstalledState] = {}
        self.dead_links: set[int] = set()
        self.timings: dict[str, float] = {}

    # ---- lifecycle -------------------------------------------------------------------------------------
    def _each(self, fn: Callable[[str], T], names: Iterable[str] | None = None) -> dict[str, T]:
        """Run fn per switch concurrently; the first failure is re-raised with the switch's name."""
        names = list(names if names is not None else self.addresses)
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

    def connect(self) -> None:
        def one(name: str) -> SwitchConnection:
            node = self.topo.nodes[name]
            conn = SwitchConnection(self.addresses[name], device_id=node.device_id or 0,
                                    p4info=self.artifacts.p4info, election_id=self.election_id, name=name)
            conn.connect()
            if not conn.is_primary:
                raise RuntimeError("another controller is primary for this switch")
            return conn

        self.connections = self._timed("connect", lambda: self._each(one))

    def push_pipelines(self) -> None:
        def one(name: str) -> None:
            self.connections[name].set_pipeline(self.artifacts.device_config, self.artifacts.p4info)

        self._timed("pipeline", lambda: self._each(one))

    def install(self) -> int:
        """Compute routes for the whole fabric and write every switch's tables; returns entries written."""
        routes = compute_routes(self.topo, self.dead_links)
        written = self._timed("entries", lambda: self._each(lambda n: self._install_switch(n, routes[n])))
        return sum(written.values())

    def start(self) -> int:
        """connect + push + install + policy: the whole bring-up of the control plane."""
        self.connect()
        self.push_pipelines()
        total = self.install()
        self.policy.start(self)
        return total

    def close(self) -> None:
        self.policy.stop()
        for conn in self.connections.values():
            conn.close()
        self.connections.clear()

    def __enter__(self) -> FabricController:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- tables ---------------------------------------------------------------------------------------
    def _install_switch(self, name: str, routes: SwitchRoutes) -> int:
        conn = self.connections[name]
        state = self.installed[name] = InstalledState()
        updates = list(self._group_updates(conn, state, routes.groups.values()))
        for route in routes.routes:
            gid = state.group_ids[routes.groups[route.group_id]]
            state.route_group[route.eid] = gid
            updates += [_insert(e) for e in self._route_entries(conn, route.eid, route.ipv4, gid)]
        for port, (src, dst) in routes.neighbor_macs.items():
            updates.append(_insert(conn.table_entry("neighbor_mac", {"standard_metadata.egress_port": port},
                                                    "set_macs", {"src_mac": src, "dst_mac": dst})))
            ecn = self.policy.ecn_for_port(name, port)
            if ecn is not None:
                updates.append(_insert(conn.table_entry(
                    "ecn_config", {"standard_metadata.egress_port": port}, "set_ecn_thresholds", ecn.params())))
        updates.append(pb.Update(type=pb.Update.MODIFY, entity=_entity(conn.table_entry(
            "lb_config", action="set_lb_config", params=self.policy.lb_params(), default=True))))
        conn.write(updates)
        state.entries = len(updates)
        return len(updates)

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
                    yield _insert(conn.member(ECMP_PROFILE, port, "ecmp_set_port", {"port": port}))
            yield _insert(conn.group(ECMP_PROFILE, gid, ports, max_size=8))
            yield _insert(conn.table_entry("ecmp_group", {"meta.group_id": gid}, group_id=gid))
            padded = list(ports) + [0] * (8 - len(ports))
            params = {"n_ports": len(ports), **{f"port{i}": p for i, p in enumerate(padded)}}
            yield _insert(conn.table_entry("nhop_group", {"meta.group_id": gid}, "set_candidates", params))

    def _route_entries(self, conn: SwitchConnection, eid: int, ipv4: str, gid: int) -> list[pb.TableEntry]:
        params = {"group_id": gid, "dst_index": eid}
        return [conn.table_entry("eid_table", {"hdr.ethplus.dst_id": eid}, "eid_to_group", params),
                conn.table_entry("ipv4_lpm", {"hdr.ipv4.dstAddr": f"{ipv4}/32"}, "ipv4_to_group", params)]

    # ---- failures -------------------------------------------------------------------------------------
    def set_port_liveness(self, switch: str, port: int, up: bool) -> None:
        self.connections[switch].write_register("port_down", port, 0 if up else 1)

    def link_index(self, a: str, b: str) -> int:
        for index, link in enumerate(self.topo.links):
            if {link.a.owner, link.b.owner} == {a, b}:
                return index
        raise KeyError(f"no link between {a} and {b}")

    def link_down(self, a: str, b: str) -> float:
        """Flip liveness at both ends at once, then reroute around the link; returns the seconds it took."""
        return self._link_change(self.link_index(a, b), up=False)

    def link_up(self, a: str, b: str) -> float:
        return self._link_change(self.link_index(a, b), up=True)

    def _link_change(self, index: int, up: bool) -> float:
        start = time.perf_counter()
        link = self.topo.links[index]
        for end in (link.a, link.b):
            if self.topo.nodes[end.owner].is_switch and end.owner in self.connections:
                self.set_port_liveness(end.owner, end.number, up)
        (self.dead_links.discard if up else self.dead_links.add)(index)
        self.reroute()
        return time.perf_counter() - start

    def reroute(self) -> int:
        """Recompute routes and rewrite only the destinations whose candidate set changed."""
        routes = compute_routes(self.topo, self.dead_links)

        def one(name: str) -> int:
            conn, state, new = self.connections[name], self.installed[name], routes[name]
            updates = list(self._group_updates(conn, state, new.groups.values()))
            for route in new.routes:
                ports = new.groups[route.group_id]
                gid = state.group_ids.get(ports)
                if gid is None or state.route_group.get(route.eid) == gid:
                    continue
                state.route_group[route.eid] = gid
                updates += [pb.Update(type=pb.Update.MODIFY, entity=_entity(e))
                            for e in self._route_entries(conn, route.eid, route.ipv4, gid)]
            if updates:
                conn.write(updates)
            return len(updates)

        return sum(self._each(one).values())


def _entity(message: Any) -> pb.Entity:
    return as_entity(message)


def _insert(message: Any) -> pb.Update:
    return pb.Update(type=pb.Update.INSERT, entity=_entity(message))
