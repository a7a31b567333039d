"""Built-in topologies at default and scaled sizes: counts, radix limits, unique numbering, path diversity."""

from __future__ import annotations

import time

import pytest

from topologies import TopologyError, build, names
from topologies.analysis import plane_diversity
from topologies.model import MAX_SWITCH_PORT


def _check_unique(t) -> None:
    ends = [(e.owner, e.number) for ln in t.links for e in ln.ends()]
    assert len(ends) == len(set(ends)), "a port is used twice"
    eids = [ep.eid for ep in t.endpoints.values()]
    assert len(eids) == len(set(eids)) and all(1 <= e <= 0xFFFF for e in eids)
    itfs = [i for ep in t.endpoints.values() for i in ep.interfaces.values()]
    assert len({i.mac for i in itfs}) == len(itfs)
    assert len({i.ipv4 for i in itfs}) == len(itfs)
    devs = [n.device_id for n in t.switches]
    assert sorted(devs) == list(range(1, len(devs) + 1))
    for n in t.switches:
        used = t.ports(n.name)
        assert len(used) <= n.radix <= MAX_SWITCH_PORT
        assert all(1 <= p <= n.radix for p in used)


@pytest.mark.parametrize("name", ["erack", "upn", "hpn", "line", "leafspine"])
def test_every_builtin_builds_at_default_size_with_unique_numbering(name):
    t = build(name)
    assert t.name == name and t.switches and t.hosts
    _check_unique(t)
    for h in t.hosts:  # one interface per plane the host is attached to, port = plane, named eth<plane>
        for plane, itf in t.endpoints[h.name].interfaces.items():
            assert itf.port == plane and itf.ifname == f"eth{plane}"
            assert itf.ipv4 == f"10.{plane}.{t.endpoints[h.name].eid >> 8}.{t.endpoints[h.name].eid & 255}"


def test_registry_lists_all_builtins():
    assert set(names()) >= {"erack", "upn", "hpn", "line", "leafspine"}


def test_erack_full_size_shape_and_speed():
    t0 = time.monotonic()
    t = build("erack")
    assert time.monotonic() - t0 < 5
    assert (len(t.hosts), len(t.switches), len(t.links), t.planes) == (64, 8, 512, list(range(8)))
    for sw in t.switches:
        assert sw.tier == 1 and len(t.ports(sw.name)) == 64
        assert [t.neighbor(sw.name, p).owner for p in range(1, 65)] == [f"gpu{g}" for g in range(64)]
    for ep in t.endpoints.values():
        assert sorted(ep.interfaces) == list(range(8))
    for p in (0, 7):
        d = plane_diversity(t, p)
        assert (d.min_hops, d.max_hops, d.min_paths, d.max_paths) == (2, 2, 1, 1)


@pytest.mark.parametrize("gpus,planes", [(16, 4), (2, 1), (33, 3)])
def test_erack_scaled(gpus, planes):
    t = build("erack", gpus=gpus, planes=planes)
    assert (len(t.hosts), len(t.switches), len(t.links)) == (gpus, planes, gpus * planes)
    _check_unique(t)


def test_erack_radix_limit():
    with pytest.raises(TopologyError, match="radix"):
        build("erack", gpus=65)
    assert len(build("erack", gpus=100, radix=128).hosts) == 100


def test_upn_full_size_is_two_tier_clos_per_plane():
    t0 = time.monotonic()
    t = build("upn")
    assert time.monotonic() - t0 < 10
    assert len(t.hosts) == 512 and t.planes == [0, 1, 2, 3]
    leaves = [n for n in t.switches if n.role == "leaf"]
    spines = [n for n in t.switches if n.role == "spine"]
    assert (len(leaves), len(spines)) == (4 * 8, 4 * 4)
    assert len(t.links) == 4 * (512 + 8 * 4 * 16)
    for n in leaves + spines:
        assert len(t.ports(n.name)) == 128 == n.radix  # non-blocking: 64 down + 64 up, spines full
    d = plane_diversity(t, 0)
    # same leaf: 2 hops, 1 path; other leaf: 4 hops, 4 spines x 16 up-links x 16 down-links port-level paths
    assert (d.min_hops, d.max_hops, d.min_paths, d.max_paths) == (2, 4, 1, 4 * 16 * 16)


def test_upn_single_tier_when_radix_allows():
    t = build("upn", gpus=64, planes=2, radix=64)
    assert [n.role for n in t.switches] == ["plane", "plane"]
    assert {n.tier for n in t.switches} == {1}


def test_upn_scaled_two_tier():
    t = build("upn", gpus=16, planes=2, radix=8)
    per_plane = [n for n in t.switches if n.plane == 0]
    assert sorted(n.role for n in per_plane) == ["leaf"] * 4 + ["spine"] * 2
    d = plane_diversity(t, 1)
    assert (d.max_hops, d.max_paths) == (4, 2 * 2 * 2)
    _check_unique(t)


def test_upn_refuses_more_than_two_tiers_and_oversized_radix():
    with pytest.raises(TopologyError, match="more than two tiers"):
        build("upn", gpus=512, radix=16)
    with pytest.raises(TopologyError, match="radix"):
        build("upn", radix=512)


def test_hpn_default_is_rail_optimised_dual_plane():
    t = build("hpn")
    assert t.planes == [0, 1]
    assert len(t.hosts) == 2 * 2 * 8
    assert len([n for n in t.switches if n.role == "tor"]) == 2 * 8 * 2
    assert len([n for n in t.switches if n.role == "agg"]) == 2 * 2
    assert len(t.links) == 32 * 2 + 32 * 2
    for h in t.hosts:
        tors = [t.nodes[ln.other(h.name).owner] for ln in t.links_of(h.name)]
        assert [x.plane for x in tors] == [0, 1]  # dual-ToR: NIC port 0 -> plane 0, port 1 -> plane 1
        assert {x.attrs["rail"] for x in tors} == {h.attrs["rail"]}  # rail-optimised
        assert {x.attrs["segment"] for x in tors} == {h.attrs["segment"]}
    for p in (0, 1):
        d = plane_diversity(t, p)
        assert (d.min_hops, d.max_hops, d.min_paths, d.max_paths) == (2, 4, 1, 2)


def test_hpn_scaled():
    t = build("hpn", segments=3, hosts_per_segment=4, gpus_per_host=2, aggs_per_plane=3)
    assert len(t.hosts) == 3 * 4 * 2
    assert len(t.switches) == 3 * 2 * 2 + 2 * 3
    tor = t.nodes["seg2-rail1-tor1"]
    assert len(t.ports(tor.name)) == 4 + 3
    assert plane_diversity(t, 1).max_paths == 3
    _check_unique(t)
    with pytest.raises(TopologyError, match="radix"):
        build("hpn", hosts_per_segment=8, aggs_per_plane=2, radix=9)


def test_line_and_leafspine():
    t = build("line", n=5)
    assert (len(t.switches), len(t.hosts), len(t.links)) == (5, 2, 6)
    assert plane_diversity(t, 0).max_hops == 6
    t = build("leafspine", leaves=3, spines=4, hosts_per_leaf=2)
    assert (len(t.switches), len(t.hosts), len(t.links)) == (7, 6, 6 + 12)
    d = plane_diversity(t, 0)
    assert (d.min_hops, d.max_hops, d.min_paths, d.max_paths) == (2, 4, 1, 4)
    assert [p for p in t.ports("leaf1")] == [1, 2, 3, 4, 5, 6]  # hosts first, then spines


def test_same_parameters_same_numbering():
    from topologies.yaml_loader import to_yaml

    for name, params in [("erack", {"gpus": 8, "planes": 2}), ("hpn", {}), ("upn", {"gpus": 20, "radix": 8})]:
        assert to_yaml(build(name, **params)) == to_yaml(build(name, **params))


def test_parameter_errors():
    with pytest.raises(TopologyError, match="unknown parameter"):
        build("erack", gpu=3)
    with pytest.raises(TopologyError, match="expected int"):
        build("erack", gpus="many")
    with pytest.raises(TopologyError, match="minimum"):
        build("erack", gpus=0)
    with pytest.raises(TopologyError, match="unknown topology"):
        build("torus")
    assert build("erack", gpus="4", planes=2.0).params["gpus"] == 4
