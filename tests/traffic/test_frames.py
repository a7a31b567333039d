"""Frame templates: what the engine stamps parses back with the project's Scapy layers, and the receiver
counts CE marks, loss, reorder and duplicates on real frames crossing a veth pair."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from traffic.frames import FORMATS, PROBE, Addr, Parsed, entropy, parse_ethplus, parse_roce
from traffic.layers import EthPlus, RoCEv2BTH
from traffic.netns import open_packet_socket
from traffic.receiver import FlowRx, RxAccounting
from traffic.transport import ACK, CNP, NAK, Feedback

A = Addr("02:e7:00:00:00:01", "10.77.0.1", endpoint=5, plane=2)
B = Addr("02:e7:00:00:00:02", "10.77.0.2", endpoint=700, plane=2)


def test_roce_template_round_trip() -> None:
    fmt = FORMATS["roce"]
    tpl = fmt.for_flow(fmt.build(A, B, 0, 1000), 4242)
    raw = bytes(tpl.stamp(4242, 77, 100, 123456))
    pkt = Ether(raw)
    assert pkt[IP].src == A.ip and pkt[IP].dst == B.ip and pkt[IP].tos & 3 == 2  # ECT(0)
    assert pkt[UDP].dport == 4791 and pkt[UDP].sport == entropy(4242)
    assert pkt[RoCEv2BTH].dest_qp == 4242 and pkt[RoCEv2BTH].psn == 77
    assert pkt[IP].len == 20 + 8 + 12 + 1000 + 4
    check = Ether(raw)
    del check[IP].chksum
    assert bytes(check) == raw  # the IPv4 checksum is right
    p = parse_roce(raw)
    assert (p.flow, p.seq, p.npkts, p.tx_ns, p.ce) == (4242, 77, 100, 123456, False)
    assert len(raw) == 14 + fmt.l3_overhead + 1000
    assert parse_ethplus(raw) is None


def test_ethplus_template_round_trip() -> None:
    fmt = FORMATS["ethplus"]
    tpl = fmt.for_flow(fmt.build(A, B, 0, 500), 9)
    raw = bytearray(tpl.stamp(9, 0xABCDE, 20, 1))
    h = Ether(bytes(raw))[EthPlus]
    assert (h.src_id, h.dst_id, h.plane, h.ect, h.ce, h.seq, h.entropy) == (5, 700, 2, 1, 0, 0xABCDE, entropy(9))
    assert len(raw) == 14 + 12 + 500
    raw[14] |= 0x01  # a switch marks CE
    raw[20:22] = (33).to_bytes(2, "big")  # and raises max_qdepth
    p = parse_ethplus(bytes(raw))
    assert p.ce and p.qdepth == 33 and p.seq == 0xABCDE and p.flow == 9


@pytest.mark.netns
def test_receiver_counts_marks_loss_reorder_duplicates(pair_lab) -> None:
    lab, ports = pair_lab
    tx = open_packet_socket(ports[(0, 0)].netns, "eth0")
    rx = open_packet_socket(ports[(1, 0)].netns, "eth0")
    try:
        fmt = FORMATS["roce"]
        tpl = fmt.build(A, B, 1, 200)
        ce_tpl = fmt.build(A, B, 1, 200)
        ce_frame = Ether(bytes(ce_tpl.buf))
        ce_frame[IP].tos = 0x03
        del ce_frame[IP].chksum
        ce_tpl.buf[:] = bytes(ce_frame)
        order = [0, 1, 4, 2, 3, 3, 6, 7, 9]  # 5 and 8 lost, 2 and 3 late (distance 2 and 1), 3 twice
        marked = {1, 6}
        for seq in order:
            t = ce_tpl if seq in marked else tpl
            tx.send(t.stamp(1, seq, 10, 0))
        recv = RxAccounting()
        flow = recv.expect(1, 10)
        deadline = time.monotonic() + 2
        got = 0
        while got < len(order) and time.monotonic() < deadline:
            try:
                data = rx.recv(4096)
            except BlockingIOError:
                time.sleep(0.001)
                continue
            p = parse_roce(data)
            if p is not None:
                recv.on_frame(p, time.monotonic_ns())
                got += 1
        assert got == len(order)
        assert flow.delivered == 8 and flow.lost == 2 and flow.duplicates == 1
        assert flow.reordered == 2 and flow.reorder_max == 2 and flow.reorder_sum == 3
        assert flow.ce == 2 and not flow.complete
    finally:
        tx.close()
        rx.close()


def test_probe_record_size() -> None:
    assert PROBE.size == 24


@pytest.mark.parametrize("name", ["roce", "ethplus"])
def test_readdressed_templates_equal_scapy_built_ones(name: str) -> None:
    fmt = FORMATS[name]
    base = fmt.build(A, B, 1, 300)
    for i, (src, dst, gw) in enumerate([
        (Addr("02:e1:00:01:00:07", "10.1.0.7", 7, 1), Addr("02:e1:00:01:03:ff", "10.1.3.255", 1023, 1), None),
        (Addr("02:e1:00:00:00:02", "10.0.0.2", 2, 0), Addr("02:e1:00:00:00:09", "10.0.0.9", 9, 0),
         "02:e5:00:01:00:03"),
    ]):
        patched = fmt.for_flow(fmt.for_pair(base, src, dst, gw), 100 + i)
        built = fmt.build(src, dst, 100 + i, 300, True, gw)
        assert patched.buf == built.buf


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 11), st.booleans(), st.integers(-1, 40)), max_size=40))
def test_wire_statistics_alone_match_the_full_receive_accounting(arrivals) -> None:
    """Under a reliable transport the engine keeps only the wire statistics (`FlowRx.on_wire`); for any arrival
    pattern (reordered, duplicated, marked, beyond the flow) they equal what `on_packet` counts."""
    full, wire = FlowRx(1, 10), FlowRx(1, 10)
    for seq, ce, qdepth in arrivals:
        p = Parsed(1, seq, 10, 0, ce, qdepth, 100)
        full.on_packet(p, 0)
        wire.on_wire(p)
    for name in ("duplicates", "reordered", "reorder_max", "reorder_sum", "ce", "qdepth_max", "max_seq", "seen",
                 "reorder_buffer", "next_in_order", "held"):
        assert getattr(wire, name) == getattr(full, name), name


@pytest.mark.parametrize("name", ["roce", "ethplus"])
def test_feedback_record_round_trip(name: str) -> None:
    """Every field of an ACK/NAK/CNP survives stamping into the pre-built frame and parsing back (one template
    is patched in place for every feedback frame of a flow, so a field left from the previous one would show)."""
    fmt = FORMATS[name]
    tpl = fmt.for_flow(fmt.build_feedback(B, A, 0), 4242)
    for fb in (Feedback(ACK, 1 << 30, 17, (1 << 64) - 1, -1, (1 << 63) + 5), Feedback(CNP, 9), Feedback(NAK, 3, 3, 0, 40, 1)):
        raw = bytes(tpl.stamp_feedback(4242, fb))
        p = fmt.parse(raw)
        assert p is not None and p.flow == 4242 and p.feedback == fb and p.seq == 0 and p.npkts == 0
        if tpl._joint:  # the one-pack stamp (RoCEv2) writes what the field-by-field one writes
            tpl._joint = False
            assert bytes(tpl.stamp_feedback(4242, fb)) == raw
            tpl._joint = True
        if name == "roce":
            assert Ether(raw)[RoCEv2BTH].opcode == (0x81 if fb.kind == CNP else 0x11)
            assert Ether(raw)[RoCEv2BTH].psn == fb.cum & 0xFFFFFF


@settings(max_examples=60, deadline=None)
@given(seq=st.integers(0, (1 << 24) - 1), flow=st.integers(0, (1 << 32) - 1), tx=st.integers(0, (1 << 64) - 1),
       tos=st.integers(0, 255))
def test_roce_fast_paths_agree_with_the_field_by_field_ones(seq: int, flow: int, tx: int, tos: int) -> None:
    """The one-pack stamp and the one-unpack parse (IPv4 without options) give what the general code gives:
    the same bytes, and the same Parsed as a frame carrying IPv4 options (which takes the general parser)."""
    fmt = FORMATS["roce"]
    tpl = fmt.for_flow(fmt.build(A, B, 0, 1000), flow & 0xFFFFFF)
    joint = bytes(tpl.stamp(flow, seq, 300, tx))
    tpl._joint = False
    assert bytes(tpl.stamp(flow, seq, 300, tx)) == joint
    raw = bytearray(joint)
    raw[15] = tos
    fast = parse_roce(bytes(raw))
    pkt = Ether(bytes(raw))
    pkt[IP].options = b"\x01\x01\x01\x00"  # NOP NOP NOP EOL: IHL 6
    del pkt[IP].ihl, pkt[IP].len, pkt[IP].chksum
    slow = parse_roce(bytes(pkt))
    assert fast is not None and slow is not None
    assert (fast.flow, fast.seq, fast.npkts, fast.tx_ns, fast.ce, fast.trimmed) == (flow, seq, 300, tx, tos & 3 == 3,
                                                                                    tos >> 2 == 0x21)
    assert (slow.flow, slow.seq, slow.npkts, slow.tx_ns, slow.ce, slow.trimmed) == (
        fast.flow, fast.seq, fast.npkts, fast.tx_ns, fast.ce, fast.trimmed)
    raw[36:38] = b"\x12\x34"  # another UDP port: not ethlab's
    assert parse_roce(bytes(raw)) is None
