"""Route computation on built-in topologies: the expected ECMP sets, and failures routed around."""

from __future__ import annotations

import topologies
from controller.routing import compute_routes


def test_leafspine_groups_are_the_expected_set() -> None:
    topo = topologies.load("leafspine")
    routes = compute_routes(topo)
    leaves = [s for s in topo.switches if s.role == "leaf"]
    spines = [s for s in topo.switches if s.role == "spine"]
    for leaf in leaves:
        r = routes[leaf.name]
        local = {topo.endpoints[link.other(leaf.name).owner].eid: port
                 for port, link in topo.ports(leaf.name).items() if not topo.nodes[link.other(leaf.name).owner].is_switch}
        uplinks = tuple(sorted(p for p, link in topo.ports(leaf.name).items()
                               if topo.nodes[link.other(leaf.name).owner].is_switch))
        assert len(uplinks) == len(spines)
        for route in r.routes:
            ports = r.groups[route.group_id]
            assert ports == ((local[route.eid],) if route.eid in local else uplinks)
        assert len(r.routes) == len(topo.endpoints)
        assert not r.unreachable
    for spine in spines:
        for route in routes[spine.name].routes:
            assert len(routes[spine.name].groups[route.group_id]) == 1


def test_every_switch_reaches_every_endpoint_on_its_plane() -> None:
    topo = topologies.load("erack", gpus=16, planes=4)
    routes = compute_routes(topo)
    assert len(routes) == 4
    for r in routes.values():
        assert sorted(route.eid for route in r.routes) == sorted(e.eid for e in topo.endpoints.values())
        assert all(len(r.groups[route.group_id]) == 1 for route in r.routes)


def test_dead_link_is_removed_from_candidate_sets() -> None:
    topo = topologies.load("leafspine")
    leaf = next(s for s in topo.switches if s.role == "leaf")
    dead = next(i for i, link in enumerate(topo.links)
                if leaf.name in (link.a.owner, link.b.owner)
                and all(topo.nodes[p.owner].is_switch for p in (link.a, link.b)))
    dead_port = topo.links[dead].a.number if topo.links[dead].a.owner == leaf.name else topo.links[dead].b.number
    before = compute_routes(topo)[leaf.name]
    after = compute_routes(topo, {dead})[leaf.name]
    assert any(dead_port in ports for ports in before.groups.values())
    assert all(dead_port not in ports for ports in after.groups.values())
    assert not after.unreachable


def test_neighbor_macs_point_at_the_far_end() -> None:
    topo = topologies.load("line", n=3)
    routes = compute_routes(topo)
    for sw in topo.switches:
        for port, (src, dst) in routes[sw.name].neighbor_macs.items():
            far = topo.neighbor(sw.name, port)
            if not topo.nodes[far.owner].is_switch:
                assert dst == topo.endpoints[far.owner].interfaces[0].mac
            assert src.startswith("02:")


def test_more_than_eight_ports_are_shared_out_over_destinations() -> None:
    """A UPN 512 leaf has 64 uplinks (16 to each of 4 spines) but the program carries 8 candidates: each
    destination gets every 8th uplink (2 per spine), and all 64 carry some destination."""
    from topologies.builtins import upn

    topo = upn(gpus=512, planes=1, radix=128, rate_gbps=200, delay_us=0.0)
    r = compute_routes(topo)["p0-leaf0"]
    uplinks = sorted(p for p, link in topo.ports("p0-leaf0").items()
                     if topo.nodes[link.other("p0-leaf0").owner].is_switch)
    assert len(uplinks) == 64
    local = {ep.eid for ep in topo.endpoints.values() if int(ep.host.removeprefix("gpu")) < 64}
    used: set[int] = set()
    for route in r.routes:
        ports = r.groups[route.group_id]
        assert len(ports) <= 8
        if route.eid not in local:
            assert len(ports) == 8 and len({topo.ports("p0-leaf0")[p].other("p0-leaf0").owner for p in ports}) == 4
            used |= set(ports)
    assert used == set(uplinks)
