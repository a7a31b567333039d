"""Two ethplus.p4 switches in a row: the per-hop fields and controller-sent probes end to end.

Why: max_qdepth, ce and hop_limit are only useful if they compose along a path,
and adaptive routing only works if a probe the controller injects at one switch
teaches the next one. Frames are carried between the harnesses by hand, like a
link would.

    host --1[ A ]2-----1[ B ]3-- endpoint 700
              [ A ]4-----4[ B ]
"""

from __future__ import annotations

from scapy.layers.l2 import Ether

from tests.support.dataplane import ethplus_frame, probe_frame
from traffic.layers import CPU_PORT, LB_ADAPTIVE, LB_SPRAY, CpuPacketOut, EthPlus


def two_switches(make_switch, mode_a: int):
    a, b = make_switch(seed=1), make_switch(seed=2)
    a.set_mode(mode_a)
    a.add_group(1, [2, 4])
    a.route_eid(700, 1, dst_index=700)
    b.set_mode(LB_SPRAY)
    b.add_group(1, [3])
    b.route_eid(700, 1, dst_index=700)
    return a, b


LINKS_A_TO_B = {2: 1, 4: 4}  # A's port -> B's port at the other end of the link


def across(a, b, frame: bytes) -> tuple[int, bytes]:
    """Send on A port 1, carry A's output over the link it left on, return B's output."""
    port_a, mid = a.send_one(1, frame)
    return b.send_one(LINKS_A_TO_B[port_a], mid)


def test_path_fields_compose_over_two_hops(make_switch) -> None:
    a, b = two_switches(make_switch, LB_SPRAY)
    a.add_group(2, [2])
    a.route_eid(701, 2)
    b.route_eid(701, 1)
    a.set_ecn(2, kmin=10, kmax=20, pmax=0.1)
    b.set_ecn(3, kmin=10, kmax=20, pmax=0.1)

    # A's uplink queue is the deeper one: the header carries the path maximum
    a.h.set_queue_depth(2, 15)
    b.h.set_queue_depth(3, 8)
    port, out = across(a, b, ethplus_frame(dst_id=701, hops=5))
    e = Ether(out)[EthPlus]
    assert (port, e.max_qdepth, e.hop_limit) == (3, 15, 3)

    # congestion at the second hop only: marked there, and the mark survives
    a.h.set_queue_depth(2, 0)
    b.h.set_queue_depth(3, 25)
    port, out = across(a, b, ethplus_frame(dst_id=701, hops=5))
    e = Ether(out)[EthPlus]
    assert (e.ce, e.max_qdepth) == (1, 25)
    assert a.counter("MyEgress.ecn.ecn_marked", 2)[0] == 0
    assert b.counter("MyEgress.ecn.ecn_marked", 3)[0] == 1

    # a frame that arrives at B with one hop left goes no further
    _, mid = a.send_one(1, ethplus_frame(dst_id=701, hops=2))
    assert b.send(1, mid) == []
    assert b.counter("MyIngress.drop_reason_counter", 2)[0] == 1


def test_controller_probe_sent_at_b_steers_a(make_switch) -> None:
    a, b = two_switches(make_switch, LB_ADAPTIVE)

    def a_choice() -> set[int]:
        return {a.send_one(1, ethplus_frame(entropy=e))[0] for e in range(0, 4000, 97)}

    # the controller sends a probe for endpoint 700 out of B's port 4 (packet-out) ...
    for b_port, a_port, depth in ((4, 4, 9), (1, 2, 3)):
        pkt_out = bytes(CpuPacketOut(egress_port=b_port)) + probe_frame(dst_index=700, qdepth=depth)
        [(port, wire)] = b.send(CPU_PORT, pkt_out)
        assert port == b_port and Ether(wire)[EthPlus].hop_limit == 4   # sent as is
        # ... it crosses the link into A, which learns the reverse path
        assert a.send(a_port, wire) == []
    assert a.register("MyIngress.lb.best_port", 700) == 2
    assert a_choice() == {2}

    # the link A2-B1 gets busy: a fresh probe over it reports the depth and A moves to 4
    pkt_out = bytes(CpuPacketOut(egress_port=1)) + probe_frame(dst_index=700, qdepth=30)
    [(_, wire)] = b.send(CPU_PORT, pkt_out)
    a.send(2, wire)
    assert a.register("MyIngress.lb.best_qdepth", 700) == 30
    pkt_out = bytes(CpuPacketOut(egress_port=4)) + probe_frame(dst_index=700, qdepth=9)
    [(_, wire)] = b.send(CPU_PORT, pkt_out)
    a.send(4, wire)
    assert a_choice() == {4}
    # and data from A reaches the endpoint through B whatever A picked
    port, _ = across(a, b, ethplus_frame())
    assert port == 3
