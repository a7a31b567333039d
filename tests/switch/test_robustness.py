"""10,000 random and malformed frames: the switch keeps running and accounts for every one."""

from __future__ import annotations

import random

import pytest
from scapy.all import IP, TCP, UDP, Ether, Raw, fuzz

from tests.support.switch import BASIC_L3, compiled, table_entry

pytestmark = pytest.mark.netns

TOTAL = 10_000
ROUTER_MAC, H2_MAC = "00:00:00:00:00:aa", "00:00:00:00:02:02"


def malformed_frames(n: int, seed: int = 7) -> list[bytes]:
    """A mix of scapy fuzz(), truncated headers, wrong checksums, wrong IHL/versions and plain noise."""
    rng = random.Random(seed)
    base = Ether(dst=ROUTER_MAC, src="00:00:00:00:01:01") / IP(src="10.0.1.1", dst="10.0.2.2") / UDP() / Raw(b"x" * 20)
    good = bytes(base)
    fuzzed = [bytes(fuzz(Ether() / IP() / (UDP() if i % 2 else TCP()))) for i in range(300)]
    fuzzed += [bytes(Ether(dst=ROUTER_MAC) / fuzz(IP(dst="10.0.2.2"))) for _ in range(200)]
    out: list[bytes] = []
    for i in range(n):
        kind = i % 6
        if kind == 0:
            fr = fuzzed[rng.randrange(len(fuzzed))]
        elif kind == 1:  # truncated inside the Ethernet or IPv4 header
            fr = good[: rng.randrange(14, 34)]  # the kernel sends nothing shorter than 14
        elif kind == 2:  # wrong IPv4 checksum
            b = bytearray(good)
            b[24] ^= rng.randrange(1, 256)
            fr = bytes(b)
        elif kind == 3:  # random bytes after a valid Ethernet header claiming IPv4
            fr = good[:14] + rng.randbytes(rng.randrange(0, 100))
        elif kind == 4:  # IPv4 with a bad version/IHL, TTL 0 or 1
            b = bytearray(good)
            b[14] = rng.choice([0x00, 0x46, 0x4F, 0x65, 0xF5])
            b[22] = rng.choice([0, 1, 64])
            fr = bytes(b)
        else:  # noise of any length the link carries
            fr = rng.randbytes(rng.randrange(14, 1515))
        out.append(fr)
    return out


def _tx_packets(lab, host: int) -> int:
    """The host interface's own transmit counter: the ground truth of frames handed to the switch. Under
    heavy load the switch once received 2 frames more than the sender counted (10003 for 10001); the
    kernel's count is what the switch must account for."""
    import subprocess

    path = f"/sys/class/net/{lab.host_if(host)}/statistics/tx_packets"
    return int(subprocess.run(lab.in_ns(host, "cat", path), capture_output=True, text=True, check=True).stdout)


def test_random_and_malformed_frames_are_all_accounted(lab, start_switch, capture, send) -> None:
    sw = start_switch(str(BASIC_L3))
    p4info, _ = compiled(BASIC_L3)
    conn = sw.connect(p4info)
    try:
        conn.insert(table_entry(conn, "MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": "10.0.2.0/24"},
                                     "MyIngress.ipv4_forward", {"dstAddr": H2_MAC, "port": 2}))
        frames = malformed_frames(TOTAL)
        cap = capture(2, count=0, max_seconds=60, idle=2.0)
        wire_before = _tx_packets(lab, 1)
        assert send(1, frames, rate=8000) == TOTAL
        # the switch still forwards a good packet afterwards
        probe = bytes(Ether(dst=ROUTER_MAC) / IP(src="10.0.1.1", dst="10.0.2.9", ttl=9) / UDP() / Raw(b"probe"))
        send(1, [probe])
        got, _ = cap.result()
        assert got and Ether(got[-1])[IP].dst == "10.0.2.9" and Ether(got[-1])[IP].ttl == 8
        assert sw.proc.alive()
    finally:
        conn.close()

    on_wire = _tx_packets(lab, 1) - wire_before  # what h1's kernel put on the link (normally TOTAL + 1)
    assert sw.stop()  # a clean exit on SIGTERM
    p1 = sw.stats()["ports"]["1"]
    # h1's kernel may add a frame of its own (IPv6 neighbour discovery) between reading its counter and the
    # switch stopping; every frame the switch received is still accounted for below
    assert on_wire >= TOTAL + 1 and on_wire <= p1["received"] <= on_wire + 4
    assert p1["forwarded"] + p1["dropped"] + p1["to_cpu"] == p1["received"]
    assert p1["forwarded"] == len(got)
    assert p1["dropped"] > TOTAL // 2  # most of this garbage is dropped


def test_kernel_refusing_frames_costs_frames_not_the_switch(lab, start_switch, capture, send) -> None:
    """A full egress qdisc makes the kernel answer ENOBUFS to the switch's send (seen in a CI run after a link
    went down under load): each refused frame is counted as a tx error and the switch keeps forwarding."""
    import subprocess

    sw = start_switch(str(BASIC_L3))
    p4info, _ = compiled(BASIC_L3)
    conn = sw.connect(p4info)
    egress = lab.sw_if(2)
    # 8 kbit/s with room for one frame: nearly every frame of a burst overflows the qdisc
    subprocess.run(["tc", "qdisc", "add", "dev", egress, "root", "tbf", "rate", "8kbit", "burst", "1600",
                    "limit", "1600"], check=True)
    try:
        conn.insert(table_entry(conn, "MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": "10.0.2.0/24"},
                                "MyIngress.ipv4_forward", {"dstAddr": H2_MAC, "port": 2}))
        frame = bytes(Ether(dst=ROUTER_MAC) / IP(src="10.0.1.1", dst="10.0.2.2") / UDP() / Raw(b"x" * 200))
        assert send(1, [frame] * 2000, rate=20000) == 2000
        subprocess.run(["tc", "qdisc", "del", "dev", egress, "root"], check=True)
        cap = capture(2, count=1, max_seconds=10)
        probe = bytes(Ether(dst=ROUTER_MAC) / IP(src="10.0.1.1", dst="10.0.2.9", ttl=9) / UDP() / Raw(b"probe"))
        send(1, [probe] * 3, rate=100)
        got, _ = cap.result()
        assert got and Ether(got[0])[IP].dst == "10.0.2.9"
        assert sw.proc.alive()
    finally:
        conn.close()
        subprocess.run(["tc", "qdisc", "del", "dev", egress, "root"], capture_output=True)
    sw.stop()
    stats = sw.stats()
    refused = stats["send_errors"]["2"]["ENOBUFS"]
    p1 = stats["ports"]["1"]
    assert refused > 1000
    assert p1["dropped_by_reason"]["tx_error"] == refused
    assert p1["forwarded"] + p1["dropped"] == p1["received"] == 2003
