"""RED/ECN marking of ethplus.p4 (DCQCN profile) measured through the harness.

Kmin 20, Kmax 100, Pmax 0.5 on the egress port: no marks at or below Kmin, every
ECN-capable packet marked at or above Kmax, and in between a marking rate that
follows Pmax * (q - Kmin) / (Kmax - Kmin) within 5 points (seeded, 2,000
packets per depth). Non-ECT packets are never touched.
"""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether

from tests.support.dataplane import ethplus_frame, roce_frame
from traffic.layers import LB_SPRAY, EthPlus

KMIN, KMAX, PMAX = 20, 100, 0.5
PORT = 2


def ecn_switch(make_switch, seed: int = 1):
    sw = make_switch(seed=seed)
    sw.set_mode(LB_SPRAY)
    sw.add_group(1, [PORT])
    sw.route_eid(700, 1)
    sw.route_ipv4(0x0A010000, 16, 1)
    sw.set_ecn(PORT, KMIN, KMAX, PMAX)
    return sw


def ethplus_marked(data: bytes) -> bool:
    # ce is the last bit of the first ETH+ byte (test_layers checks this layout)
    return data[12:14] == b"\x88\xb5" and data[14] & 0x01 == 1


def ipv4_marked(data: bytes) -> bool:
    # ECN is the low two bits of the IPv4 TOS byte
    return data[12:14] == b"\x08\x00" and data[15] & 0x03 == 0x03


def mark_rate(sw, depth: int, n: int, kind: str = "ethplus") -> float:
    sw.h.set_queue_depth(PORT, depth)
    frame = ethplus_frame() if kind == "ethplus" else roce_frame(ecn=2)
    check = ethplus_marked if kind == "ethplus" else ipv4_marked
    marked = 0
    for _ in range(n):
        port, data = sw.send_one(1, frame)
        assert port == PORT
        marked += check(data)
    return marked / n


@pytest.mark.parametrize("depth", [0, 5, 19, KMIN])
def test_no_marks_at_or_below_kmin(make_switch, depth: int) -> None:
    sw = ecn_switch(make_switch)
    assert mark_rate(sw, depth, 300) == 0.0
    assert mark_rate(sw, depth, 300, "roce") == 0.0
    assert sw.counter("MyEgress.ecn.ecn_marked", PORT)[0] == 0


@pytest.mark.parametrize("depth", [KMAX, KMAX + 1, 5000])
def test_every_ect_packet_marked_at_or_above_kmax(make_switch, depth: int) -> None:
    sw = ecn_switch(make_switch)
    assert mark_rate(sw, depth, 200) == 1.0
    assert mark_rate(sw, depth, 200, "roce") == 1.0
    assert sw.counter("MyEgress.ecn.ecn_marked", PORT)[0] == 400


@pytest.mark.parametrize("depth", [40, 60, 80])
def test_mid_range_marking_rate_follows_the_ramp(make_switch, depth: int) -> None:
    sw = ecn_switch(make_switch, seed=depth)
    expected = PMAX * (depth - KMIN) / (KMAX - KMIN)
    rate = mark_rate(sw, depth, 2000)
    assert abs(rate - expected) <= 0.05, (depth, rate, expected)
    assert sw.counter("MyEgress.ecn.ecn_marked", PORT)[0] == round(rate * 2000)


def test_ipv4_ect1_is_marked_too(make_switch) -> None:
    sw = ecn_switch(make_switch)
    sw.h.set_queue_depth(PORT, KMAX)
    _, data = sw.send_one(1, roce_frame(ecn=1))
    ip = Ether(data)[IP]
    assert ip.tos & 0x3 == 0x3
    # the checksum was updated with the new ECN bits
    fresh = IP(bytes(ip))
    del fresh.chksum
    assert IP(bytes(fresh)).chksum == ip.chksum


def test_non_ect_packets_are_never_marked(make_switch) -> None:
    sw = ecn_switch(make_switch)
    sw.h.set_queue_depth(PORT, 10 * KMAX)
    for _ in range(50):
        _, data = sw.send_one(1, ethplus_frame(ect=0))
        e = Ether(data)[EthPlus]
        assert (e.ce, e.ect) == (0, 0)
        _, data = sw.send_one(1, roce_frame(ecn=0))
        assert Ether(data)[IP].tos == 0
    assert sw.counter("MyEgress.ecn.ecn_marked", PORT)[0] == 0


def test_port_without_thresholds_never_marks(make_switch) -> None:
    sw = ecn_switch(make_switch)
    sw.add_group(2, [3])
    sw.route_eid(701, 2)
    sw.h.set_queue_depth(3, 10 * KMAX)
    for _ in range(50):
        port, data = sw.send_one(1, ethplus_frame(dst_id=701))
        assert port == 3 and not ethplus_marked(data)
