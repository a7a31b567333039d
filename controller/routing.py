"""Route computation: all shortest paths per destination, per plane, turned into next-hop groups.

Kept apart from any P4Runtime code so the route set can be tested (and reasoned about) as plain data: for
every switch, which candidate egress ports lead towards every host endpoint on the switch's plane.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from topologies.model import Topology

#: set_candidates() in p4src/include/loadbalance.p4 carries port0..port7: every mode, ECMP included, chooses
#: among at most 8 ports per destination.
MAX_CANDIDATES = 8


def candidate_subset(ports: list[int], eid: int) -> tuple[int, ...]:
    """The candidates of destination `eid` when more than MAX_CANDIDATES ports lead to it: every k-th port
    (k = ceil(n / 8)) starting at eid mod k. Destinations take turns over the subsets, so every port carries
    traffic (a UPN 512 leaf has 64 uplinks: the first 8 alone, all to one spine, left 7/8 of the uplinks idle
    and overloaded those 8 seven times)."""
    n = len(ports)
    if n <= MAX_CANDIDATES:
        return tuple(ports)
    stride = -(-n // MAX_CANDIDATES)
    return tuple(ports[eid % stride::stride][:MAX_CANDIDATES])


@dataclass(frozen=True)
class Route:
    """Destination endpoint `eid` (its interface on this plane is `ipv4`) via next-hop group `group_id`."""

    eid: int
    ipv4: str
    group_id: int


@dataclass
class SwitchRoutes:
    """Everything the fabric application installs on one switch, as data."""

    switch: str
    device_id: int
    groups: dict[int, tuple[int, ...]] = field(default_factory=dict)  # group id -> candidate ports
    routes: list[Route] = field(default_factory=list)
    neighbor_macs: dict[int, tuple[str, str]] = field(default_factory=dict)  # port -> (src, dst)
    unreachable: list[int] = field(default_factory=list)  # eids with no path from here


def _distances(adjacency: dict[str, list[tuple[str, int]]], source: str) -> dict[str, int]:
    dist = {source: 0}
    todo = deque([source])
    while todo:
        node = todo.popleft()
        for nbr, _port in adjacency[node]:
            if nbr not in dist:
                dist[nbr] = dist[node] + 1
                todo.append(nbr)
    return dist


def _adjacency(topo: Topology, plane: int, dead_links: set[int]) -> dict[str, list[tuple[str, int]]]:
    """Node -> [(neighbour, local port)] over the live links of one plane. Hosts never transit."""
    adjacency: dict[str, list[tuple[str, int]]] = {}
    for index, link in enumerate(topo.links):
        if link.plane != plane or index in dead_links:
            continue
        adjacency.setdefault(link.a.owner, []).append((link.b.owner, link.a.number))
        adjacency.setdefault(link.b.owner, []).append((link.a.owner, link.b.number))
    return adjacency


def compute_routes(topo: Topology, dead_links: set[int] | None = None) -> dict[str, SwitchRoutes]:
    """Routes for every switch: per destination, the ports on some shortest path (ECMP set)."""
    from topologies.model import switch_mac

    dead = dead_links or set()
    switches = topo.switches  # a fresh list per read: read once (UPN 512 asked 2,048 times)
    is_switch = {s.name for s in switches}
    result = {s.name: SwitchRoutes(s.name, s.device_id or 0) for s in switches}
    for plane in topo.planes:
        adjacency = _adjacency(topo, plane, dead)
        on_plane = [sw for sw in switches if sw.plane == plane]
        for host, endpoint in sorted(topo.endpoints.items(), key=lambda kv: kv[1].eid):
            iface = endpoint.interfaces.get(plane)
            if iface is None:
                continue
            dist = _distances(adjacency, host) if host in adjacency else {host: 0}
            for sw in on_plane:
                routes = result[sw.name]
                if sw.name not in dist:
                    routes.unreachable.append(endpoint.eid)
                    continue
                here = dist[sw.name]
                ports = sorted({port for nbr, port in adjacency[sw.name]
                                if dist.get(nbr, -1) == here - 1 and (nbr == host or nbr in is_switch)})
                group_id = _group_for(routes, candidate_subset(ports, endpoint.eid))
                routes.routes.append(Route(endpoint.eid, iface.ipv4, group_id))
    for sw in topo.switches:
        macs = result[sw.name].neighbor_macs
        for port, link in topo.ports(sw.name).items():
            far = link.other(sw.name)
            far_node = topo.nodes[far.owner]
            if far_node.is_switch:
                dst = switch_mac(far_node.device_id or 0, far.number)
            else:
                dst = topo.endpoints[far.owner].interfaces[link.plane].mac
            macs[port] = (switch_mac(sw.device_id or 0, port), dst)
    return result


def _group_for(routes: SwitchRoutes, ports: tuple[int, ...]) -> int:
    """One group per distinct candidate set on a switch (ids from 1, in order of first use)."""
    for group_id, existing in routes.groups.items():
        if existing == ports:
            return group_id
    group_id = len(routes.groups) + 1
    routes.groups[group_id] = ports
    return group_id
