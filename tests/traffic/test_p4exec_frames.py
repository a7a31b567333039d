"""The engine's frames cross p4src/ethplus.p4 running in p4exec's harness and come back parseable, with the
switch's marks (ECN-CE, ETH+ max_qdepth, hop limit/TTL) where the receiver looks for them."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether

from p4exec.harness import Harness
from p4exec.runtime import ActionCall, Exact, Lpm, TableEntry
from traffic.frames import FORMATS, Addr
from traffic.layers import EthPlus
from traffic.receiver import RxAccounting
from traffic.transport import ACK, CNP, NAK, Feedback

ETHPLUS_P4 = Path(__file__).resolve().parents[2] / "p4src" / "ethplus.p4"
LB = "MyIngress.lb."
A = Addr("02:e7:00:00:00:01", "10.77.0.1", endpoint=5, plane=1)
B = Addr("02:e7:00:00:00:02", "10.77.0.2", endpoint=700, plane=1)
OUT = 3


@pytest.fixture(scope="module")
def switch() -> Harness:
    """ethplus.p4 with one route to port 3 for both formats and RED/ECN between 2 and 4 queued packets."""
    h = Harness.from_file(str(ETHPLUS_P4), seed=1)
    t = h.state.tables
    t[LB + "lb_config"].set_default(ActionCall(LB + "set_lb_config", (1, 100, 1_000_000, 0)))  # spray
    t[LB + "nhop_group"].insert(TableEntry(match=(Exact(5),),
                                           action=ActionCall(LB + "set_candidates", (1, OUT, *[0] * 7))))
    t["MyIngress.fwd.eid_table"].insert(
        TableEntry(match=(Exact(B.endpoint),), action=ActionCall("MyIngress.fwd.eid_to_group", (5, 0))))
    t["MyIngress.fwd.ipv4_lpm"].insert(
        TableEntry(match=(Lpm(0x0A4D0000, 16),), action=ActionCall("MyIngress.fwd.ipv4_to_group", (5, 0))))
    t["MyEgress.ecn.ecn_config"].insert(
        TableEntry(match=(Exact(OUT),), action=ActionCall("MyEgress.ecn.set_ecn_thresholds", (2, 4, 65535))))
    return h


@pytest.mark.parametrize("name", ["roce", "ethplus"])
def test_frames_cross_the_p4_program(switch: Harness, name: str) -> None:
    fmt = FORMATS[name]
    tpl = fmt.for_flow(fmt.for_pair(fmt.build(B, A, 0, 500), A, B), 77)
    recv = RxAccounting()
    flow = recv.expect(77, 4)
    for seq, depth in enumerate([0, 1, 10, 10]):  # below Kmin twice, above Kmax twice
        switch.set_queue_depth(OUT, depth)
        sent = bytes(tpl.stamp(77, seq, 4, 1234))
        out = switch.send(1, sent)
        assert [p for p, _ in out] == [OUT]
        frame = out[0][1]
        p = fmt.parse(frame)
        assert p is not None and (p.flow, p.seq, p.npkts, p.tx_ns) == (77, seq, 4, 1234)
        assert p.ce == (depth >= 4)
        if name == "ethplus":
            assert p.qdepth == depth
            assert Ether(frame)[EthPlus].hop_limit == Ether(sent)[EthPlus].hop_limit - 1
        else:
            ip = Ether(frame)[IP]
            assert ip.ttl == 63
            check = Ether(frame)
            del check[IP].chksum
            assert bytes(check)[14:34] == frame[14:34]  # the switch left a valid IPv4 checksum
        recv.on_frame(p, seq)
    assert flow.complete and flow.ce == 2 and flow.lost == 0
    switch.set_queue_depth(OUT, 0)


@pytest.mark.parametrize("name", ["roce", "ethplus"])
def test_feedback_frames_cross_the_p4_program(switch: Harness, name: str) -> None:
    """ACK/NAK/CNP go the other way through the same program (B -> A's address is routed the same here)."""
    fmt = FORMATS[name]
    tpl = fmt.for_flow(fmt.for_pair(fmt.build_feedback(A, B, 0), A, B), 77)
    for fb in (Feedback(ACK, 12, 11, 0b101, 7), Feedback(NAK, 3, 3), Feedback(CNP, 9)):
        switch.set_queue_depth(OUT, 10)  # above Kmax: feedback is not ECN-capable, never marked
        out = switch.send(1, bytes(tpl.stamp_feedback(77, fb)))
        assert [p for p, _ in out] == [OUT]
        p = fmt.parse(out[0][1])
        assert p is not None and p.flow == 77 and p.feedback == fb and not p.ce
    switch.set_queue_depth(OUT, 0)


@pytest.mark.parametrize("name", ["roce", "ethplus"])
def test_trimmed_data_frame_keeps_flow_and_psn(switch: Harness, name: str) -> None:
    """With trimming on, a data frame to a port at the threshold leaves cut to 128 bytes and marked; the
    receiver still reads flow, PSN and packet count from it."""
    fmt = FORMATS[name]
    tpl = fmt.for_flow(fmt.for_pair(fmt.build(B, A, 0, 1000), A, B), 77)
    trim = switch.state.tables["MyIngress.trim.trim_config"]
    trim.set_default(ActionCall("MyIngress.trim.set_trim", (1, 20, 128)))
    try:
        for depth, trimmed in ((5, False), (20, True)):
            switch.state.registers["port_qdepth"].write(OUT, depth)
            out = switch.send(1, bytes(tpl.stamp(77, 3, 9, 55)))
            frame = out[0][1]
            p = fmt.parse(frame)
            assert p is not None and (p.flow, p.seq, p.npkts, p.trimmed) == (77, 3, 9, trimmed)
            assert (len(frame) == 128) == trimmed
    finally:
        trim.set_default(ActionCall("MyIngress.trim.set_trim", (0, 0, 128)))
        switch.state.registers["port_qdepth"].write(OUT, 0)
