"""Whole-topology checks. `add_link` already refuses most mistakes as they are made; this re-checks the
finished object (which may have been assembled from YAML or edited by hand) and adds global properties:
unique ids/MACs/IPs and connected planes."""

from __future__ import annotations

from collections import defaultdict

import networkx as nx

from topologies.model import MAX_ENDPOINT_ID, Topology, TopologyError


def validate(topo: Topology) -> Topology:
    """Check the whole topology; raise TopologyError naming the first problem. Returns the topology."""
    _check_links(topo)
    _check_unique_addresses(topo)
    _check_planes(topo)
    return topo


def _check_links(topo: Topology) -> None:
    seen: dict[tuple[str, int], str] = {}
    for link in topo.links:
        for end in link.ends():
            node = topo.nodes.get(end.owner)
            if node is None:
                raise TopologyError(f"link {link}: dangling end, no node {end.owner!r}")
            key = (end.owner, end.number)
            if key in seen:
                raise TopologyError(f"port {end} reused by {link} and {seen[key]}")
            seen[key] = str(link)
            if node.is_switch:
                if node.plane != link.plane:
                    raise TopologyError(f"link {link}: plane {link.plane} but switch {node.name} is in "
                                        f"plane {node.plane}")
                if not 1 <= end.number <= (node.radix or 0):
                    raise TopologyError(f"switch {node.name}: port {end.number} exceeds radix {node.radix}")
    used: dict[str, int] = defaultdict(int)
    for owner, _ in seen:
        used[owner] += 1
    for node in topo.switches:
        if used[node.name] > (node.radix or 0):
            raise TopologyError(f"switch {node.name}: {used[node.name]} links exceed radix {node.radix}")
    for node in topo.hosts:
        if not topo.endpoints[node.name].interfaces:
            raise TopologyError(f"host {node.name} has no link")


def _check_unique_addresses(topo: Topology) -> None:
    ids: dict[int, str] = {}
    macs: dict[str, str] = {}
    ips: dict[str, str] = {}
    dev_ids: dict[int, str] = {}
    for ep in topo.endpoints.values():
        if not 1 <= ep.eid <= MAX_ENDPOINT_ID:
            raise TopologyError(f"host {ep.host}: endpoint id {ep.eid} outside 1..{MAX_ENDPOINT_ID}")
        if ep.eid in ids:
            raise TopologyError(f"endpoint id {ep.eid} collision: {ids[ep.eid]} and {ep.host}")
        ids[ep.eid] = ep.host
        for itf in ep.interfaces.values():
            for table, key, what in ((macs, itf.mac.lower(), "MAC"), (ips, itf.ipv4, "IPv4")):
                if key in table:
                    raise TopologyError(f"{what} {key} collision: {table[key]} and {ep.host}")
                table[key] = ep.host
    for node in topo.switches:
        if node.device_id in dev_ids:
            raise TopologyError(f"device id {node.device_id} collision: {dev_ids[node.device_id]} "
                                f"and {node.name}")
        dev_ids[node.device_id or 0] = node.name


def _check_planes(topo: Topology) -> None:
    if not topo.switches:
        raise TopologyError("topology has no switch")
    for plane in topo.planes:
        g = topo.plane_graph(plane)
        if not nx.is_connected(g):
            parts = sorted(nx.connected_components(g), key=len)
            lonely = sorted(parts[0])[:5]
            raise TopologyError(f"plane {plane} is disconnected: {len(parts)} parts, e.g. {lonely}")
