"""Path diversity and port statistics: what `ethlab topo show` prints and the tests assert.

Shortest paths are counted on the multigraph with parallel links counted separately, because parallel
links are real alternatives for ECMP/spraying (a leaf with 4 links to one spine has 4 next hops)."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass

import networkx as nx

from topologies.model import Topology


@dataclass(frozen=True)
class PlaneDiversity:
    """Host-to-host shortest paths within one plane, over the sampled sources."""

    plane: int
    pairs: int
    min_hops: int
    max_hops: int
    min_paths: int
    max_paths: int


def count_shortest_paths(g: nx.MultiGraph, src: str) -> tuple[dict[str, int], dict[str, int]]:
    """BFS from src: (hop distance, number of shortest paths counting parallel edges) for each node.

    Paths only transit switches; hosts are sources/sinks, never relays."""
    dist = {src: 0}
    count = {src: 1}
    q = deque([src])
    while q:
        u = q.popleft()
        if u != src and g.nodes[u].get("kind") == "host":
            continue
        for v, edges in g.adj[u].items():
            mult = len(edges)
            if v not in dist:
                dist[v] = dist[u] + 1
                count[v] = count[u] * mult
                q.append(v)
            elif dist[v] == dist[u] + 1:
                count[v] += count[u] * mult
    return dist, count


def plane_diversity(topo: Topology, plane: int, max_sources: int = 8) -> PlaneDiversity:
    """Sample up to max_sources hosts spread over the plane (deterministic) and measure paths to all hosts."""
    g = topo.plane_graph(plane)
    hosts = [n for n in g.nodes if g.nodes[n]["kind"] == "host"]
    step = max(1, len(hosts) // max_sources)
    sources = hosts[::step][:max_sources]
    hops: list[int] = []
    paths: list[int] = []
    for s in sources:
        dist, count = count_shortest_paths(g, s)
        for d in hosts:
            if d != s and d in dist:
                hops.append(dist[d])
                paths.append(count[d])
    if not hops:
        return PlaneDiversity(plane, 0, 0, 0, 0, 0)
    return PlaneDiversity(plane, len(hops), min(hops), max(hops), min(paths), max(paths))


def ports_per_switch(topo: Topology) -> Counter[tuple[str, int, int]]:
    """(role, ports used, radix) -> number of switches: a compact port table."""
    c: Counter[tuple[str, int, int]] = Counter()
    for n in topo.switches:
        c[(n.role, len(topo.ports(n.name)), n.radix or 0)] += 1
    return c
