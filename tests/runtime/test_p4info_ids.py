"""p4c's id rule, checked against ids in P4Info files p4c produced.

Sources of the name->id pairs (facts read from P4Info text published in public repositories):
- p4lang/tutorials exercises "basic" and "p4runtime"/advanced_tunnel, P4Info as p4c writes it and as shown by
  p4runtime-shell sessions in public write-ups: MyIngress.ipv4_lpm 37375156, MyIngress.ipv4_forward 28792405,
  MyIngress.drop 25652968, NoAction 21257015, MyIngress.myTunnel_exact 35862311,
  MyIngress.myTunnel_ingress 24181246, MyIngress.myTunnel_forward 27454791,
  MyIngress.myTunnel_egress 33029817, counters MyIngress.ingressTunnelCounter 315557958 and
  MyIngress.egressTunnelCounter 312374841.
- a published v1model P4Info with tables MyIngress.check_compute_task 38155214 and MyIngress.tunnel_src 45250849.
"""
from __future__ import annotations

import pytest

from p4exec.runtime.p4info_ids import Prefix, assign_ids, id_for, jenkins_one_at_a_time, with_prefix

P4C_PAIRS = [
    (Prefix.TABLE, "MyIngress.ipv4_lpm", 37375156),
    (Prefix.ACTION, "MyIngress.ipv4_forward", 28792405),
    (Prefix.ACTION, "MyIngress.drop", 25652968),
    (Prefix.ACTION, "NoAction", 21257015),
    (Prefix.TABLE, "MyIngress.myTunnel_exact", 35862311),
    (Prefix.ACTION, "MyIngress.myTunnel_ingress", 24181246),
    (Prefix.ACTION, "MyIngress.myTunnel_forward", 27454791),
    (Prefix.ACTION, "MyIngress.myTunnel_egress", 33029817),
    (Prefix.COUNTER, "MyIngress.ingressTunnelCounter", 315557958),
    (Prefix.COUNTER, "MyIngress.egressTunnelCounter", 312374841),
    (Prefix.TABLE, "MyIngress.check_compute_task", 38155214),
    (Prefix.TABLE, "MyIngress.tunnel_src", 45250849),
]


@pytest.mark.parametrize(("prefix", "name", "expected"), P4C_PAIRS)
def test_ids_equal_p4c(prefix, name, expected):
    assert id_for(prefix, name) == expected
    assert assign_ids([(prefix, name)])[(prefix, name)] == expected


def test_prefix_values_match_p4info_proto():
    from p4.config.v1 import p4info_pb2
    for p in Prefix:
        assert p4info_pb2.P4Ids.Prefix.Value(p.name) == p.value


def test_whole_program_assignment():
    ids = assign_ids({Prefix.TABLE: ["MyIngress.ipv4_lpm"],
                      Prefix.ACTION: ["NoAction", "MyIngress.drop", "MyIngress.ipv4_forward"]})
    assert ids[(Prefix.ACTION, "NoAction")] == 21257015
    assert ids[(Prefix.TABLE, "MyIngress.ipv4_lpm")] == 37375156
    assert len(set(ids.values())) == 4


def test_collisions_probe_linearly_in_name_order():
    # Find two names whose 24-bit hashes collide, then check the later (sorted) one takes hash + 1.
    seen: dict[int, str] = {}
    pair = None
    for i in range(200000):
        n = f"c.t{i}"
        h = jenkins_one_at_a_time(n) & 0xFFFFFF
        if h in seen:
            pair = (seen[h], n)
            break
        seen[h] = n
    assert pair is not None
    a, b = sorted(pair)
    ids = assign_ids([(Prefix.TABLE, b), (Prefix.TABLE, a)])
    assert ids[(Prefix.TABLE, a)] == id_for(Prefix.TABLE, a)
    assert ids[(Prefix.TABLE, b)] == id_for(Prefix.TABLE, b) + 1


def test_id_annotations_take_precedence():
    taken = id_for(Prefix.ACTION, "NoAction")
    ids = assign_ids([(Prefix.ACTION, "NoAction"), (Prefix.ACTION, "a")],
                     annotated={(Prefix.ACTION, "a"): taken})
    assert ids[(Prefix.ACTION, "a")] == taken
    assert ids[(Prefix.ACTION, "NoAction")] == taken + 1
    # a bare @id gets the prefix; a wrong prefix is an error; duplicates are errors
    assert with_prefix(Prefix.TABLE, 5) == 0x02000005
    assert with_prefix(Prefix.TABLE, 0x02000005) == 0x02000005
    with pytest.raises(ValueError):
        with_prefix(Prefix.TABLE, 0x01000005)
    with pytest.raises(ValueError):
        assign_ids([], annotated={(Prefix.TABLE, "x"): 7, (Prefix.TABLE, "y"): 7})


def test_aliases_shortest_unique_suffix():
    from p4exec.runtime.p4info_ids import aliases
    a = aliases(["MyIngress.ipv4_lpm", "MyIngress.drop", "NoAction", "MyEgress.drop", "x.a.c", "y.b.c", "b.c"])
    assert a["MyIngress.ipv4_lpm"] == "ipv4_lpm" and a["NoAction"] == "NoAction"
    assert a["MyIngress.drop"] == "MyIngress.drop" and a["MyEgress.drop"] == "MyEgress.drop"
    assert a["x.a.c"] == "a.c" and a["y.b.c"] == "y.b.c" and a["b.c"] == "b.c"
