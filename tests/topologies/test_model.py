"""Model construction rules and validation errors, each named in the message."""

from __future__ import annotations

import networkx as nx
import pytest

from topologies.model import MAX_SWITCHES, Port, Topology, TopologyError, host_ipv4, host_mac
from topologies.validate import validate


def small() -> Topology:
    t = Topology("t")
    t.add_host("h1")
    t.add_host("h2")
    t.add_switch("s1", radix=4)
    t.add_link("h1", "s1")
    t.add_link("h2", "s1")
    return t


def test_ports_ids_and_addresses_are_derived_in_order():
    t = small()
    assert [str(p) for ln in t.links for p in ln.ends()] == ["h1:0", "s1:1", "h2:0", "s1:2"]
    ep = t.endpoints["h2"]
    assert ep.eid == 2
    assert ep.interfaces[0].mac == host_mac(2, 0) == "02:e1:00:00:00:02"
    assert ep.interfaces[0].cidr == "10.0.0.2/16" and host_ipv4(258, 3) == "10.3.1.2"
    assert t.neighbor("s1", 2) == Port("h2", 0)
    assert validate(t) is t


def test_graph_views():
    t = Topology("two-planes")
    t.add_host("h1")
    t.add_host("h2")
    for p in (0, 1):
        t.add_switch(f"p{p}", plane=p)
        t.add_link("h1", f"p{p}")
        t.add_link("h2", f"p{p}")
    g = t.graph()
    assert isinstance(g, nx.MultiGraph) and g.number_of_edges() == 4
    assert g.nodes["p1"]["plane"] == 1 and g.nodes["h1"]["kind"] == "host"
    sub = t.plane_graph(1)
    assert set(sub.nodes) == {"h1", "h2", "p1"} and sub.number_of_edges() == 2
    edge = next(iter(sub.edges(data=True)))[2]
    assert edge["plane"] == 1 and edge["ports"]["p1"] in (1, 2)
    assert t.endpoints["h1"].interfaces[1].ifname == "eth1"


def test_port_reused():
    t = small()
    t.add_switch("s2")
    with pytest.raises(TopologyError, match=r"port 1 reused"):
        t.add_link("s1", "s2", a_port=1)


def test_radix_exceeded():
    t = small()
    t.add_switch("s2")
    t.add_switch("s3")
    t.add_link("s1", "s2")
    t.add_link("s1", "s3")
    t.add_switch("s4")
    with pytest.raises(TopologyError, match="s1: radix 4 exceeded"):
        t.add_link("s1", "s4")
    with pytest.raises(TopologyError, match="radix exceeded"):
        t.add_link("s4", "s2", a_port=300)
    with pytest.raises(TopologyError, match="radix 255 outside"):
        t.add_switch("big", radix=255)


def test_too_many_switches_is_an_error_at_once():
    """Device ids count up in O(1), and a size nothing could bring up (a typo like `--n 100000`) stops at the
    cap with the switch named, instead of taking minutes to build."""
    t = Topology("t")
    for i in range(MAX_SWITCHES):
        t.add_switch(f"s{i}")
    assert t.nodes[f"s{MAX_SWITCHES - 1}"].device_id == MAX_SWITCHES
    with pytest.raises(TopologyError, match=f"switch extra: more than {MAX_SWITCHES} switches"):
        t.add_switch("extra")
    assert "extra" not in t.nodes


def test_dangling_and_bad_links():
    t = small()
    with pytest.raises(TopologyError, match="dangling end, no node 'nope'"):
        t.add_link("h1", "nope")
    with pytest.raises(TopologyError, match="host-to-host"):
        t.add_link("h1", "h2")
    t.add_switch("q", plane=1)
    with pytest.raises(TopologyError, match="joins plane 0 to plane 1"):
        t.add_link("s1", "q")
    with pytest.raises(TopologyError, match="second link in plane 0"):
        t.add_switch("s9")
        t.add_link("h1", "s9")
    with pytest.raises(TopologyError, match="duplicate node name"):
        t.add_host("h1")


def test_validate_finds_dangling_link_added_by_hand():
    t = small()
    del t.nodes["h2"]
    with pytest.raises(TopologyError, match="dangling end, no node 'h2'"):
        validate(t)


def test_disconnected_plane():
    t = small()
    t.add_host("h3")
    t.add_switch("s2")
    t.add_link("h3", "s2")
    with pytest.raises(TopologyError, match="plane 0 is disconnected: 2 parts"):
        validate(t)


def test_unattached_host():
    t = small()
    t.add_host("lonely")
    with pytest.raises(TopologyError, match="host lonely has no link"):
        validate(t)


def test_endpoint_id_collision_and_range():
    t = small()
    t.add_host("h3", eid=2)
    t.add_link("h3", "s1")
    with pytest.raises(TopologyError, match="endpoint id 2 collision: h2 and h3"):
        validate(t)
    with pytest.raises(TopologyError, match="endpoint id 70000"):
        Topology("x").add_host("h", eid=70000)


def test_mac_and_ip_collisions():
    from topologies.model import Interface

    t = small()
    ep = t.endpoints["h2"]
    ep.interfaces[0] = Interface(0, 0, t.endpoints["h1"].interfaces[0].mac, "10.0.9.9", 16)
    with pytest.raises(TopologyError, match="MAC 02:e1:00:00:00:01 collision: h1 and h2"):
        validate(t)
    ep.interfaces[0] = Interface(0, 0, "02:00:00:00:00:99", "10.0.0.1", 16)
    with pytest.raises(TopologyError, match="IPv4 10.0.0.1 collision"):
        validate(t)
