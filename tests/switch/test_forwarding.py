"""Two namespaces around `p4exec switch` running p4src/basic_l3.p4, pushed and populated over P4Runtime."""

from __future__ import annotations

import subprocess
import time

import pytest
from scapy.all import ARP, IP, UDP, Ether, Raw

from p4exec.switch.pcap import read_pcap
from tests.support.switch import BASIC_L3, compiled, table_entry

pytestmark = pytest.mark.netns

ROUTER_MAC = "00:00:00:00:00:aa"
H1_MAC, H2_MAC = "00:00:00:00:01:01", "00:00:00:00:02:02"


def test_basic_l3_between_two_namespaces(lab, start_switch, capture, send, tmp_path) -> None:
    pcap_dir = tmp_path / "pcap"
    sw = start_switch("--no-p4", "--pcap", str(pcap_dir))
    p4info, config = compiled(BASIC_L3)
    conn = sw.connect(p4info)
    try:
        conn.set_pipeline(device_config=config)
        conn.insert(
            table_entry(conn, "MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": "10.0.2.0/24"},
                             "MyIngress.ipv4_forward", {"dstAddr": H2_MAC, "port": 2}),
            table_entry(conn, "MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": "10.0.1.0/24"},
                             "MyIngress.ipv4_forward", {"dstAddr": H1_MAC, "port": 1}),
        )
        routed = [
            bytes(Ether(dst=ROUTER_MAC, src=H1_MAC) / IP(src="10.0.1.1", dst="10.0.2.2", ttl=64, id=i)
                  / UDP(sport=4000 + i, dport=4791) / Raw(f"payload-{i:03d}".encode() * 3))
            for i in range(20)
        ]
        no_route = [bytes(Ether(dst=ROUTER_MAC, src=H1_MAC) / IP(src="10.0.1.1", dst="10.9.9.9") / UDP())] * 5
        not_ip = [bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=H1_MAC) / ARP(psrc="10.0.1.1", pdst="10.0.1.254"))] * 3
        frames = routed + no_route + not_ip

        cap = capture(2, count=len(routed), max_seconds=10, idle=1.0)
        assert send(1, frames, rate=2000) == len(frames)
        got, _ = cap.result()

        assert len(got) == len(routed)
        for i, (sent, raw) in enumerate(zip(routed, got, strict=True)):
            pkt, orig = Ether(raw), Ether(sent)
            assert pkt.dst == H2_MAC and pkt.src == ROUTER_MAC  # rewritten by ipv4_forward
            assert pkt[IP].ttl == 63 and pkt[IP].id == i  # in order, TTL decremented
            chk = pkt[IP].chksum
            del pkt[IP].chksum
            assert Ether(bytes(pkt))[IP].chksum == chk  # checksum recomputed by the program
            assert bytes(pkt[UDP]) == bytes(orig[UDP])  # payload untouched

        # the dropped frames were sent after the routed ones and may still be on their way through the switch
        deadline = time.monotonic() + 10
        while True:
            packet_count, byte_count = conn.read_counter("MyIngress.port_counter", 1)[1]
            if packet_count >= len(frames) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert packet_count == len(frames)
        assert byte_count == sum(len(f) for f in frames)
    finally:
        conn.close()

    assert sw.stop()  # a clean exit on SIGTERM
    st = sw.stats()
    p1 = st["ports"]["1"]
    assert p1["received"] == len(frames)
    assert p1["forwarded"] == len(routed)
    assert p1["dropped_by_reason"]["pipeline"] == len(no_route) + len(not_ip)
    assert p1["forwarded"] + p1["dropped"] + p1["to_cpu"] == p1["received"]
    assert st["ports"]["2"]["transmitted"] == len(routed)
    assert st["in_flight"] == 0

    # pcap: what came in on port 1 and went out of port 2, readable by tcpdump
    assert read_pcap(pcap_dir / f"{lab.sw_if(1)}_in.pcap") == frames
    assert read_pcap(pcap_dir / f"{lab.sw_if(2)}_out.pcap") == got
    out = subprocess.run(["tcpdump", "-nn", "-r", str(pcap_dir / f"{lab.sw_if(2)}_out.pcap")],
                         capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert len(lines) == len(routed)
    assert all("10.0.1.1." in line and "10.0.2.2.4791" in line for line in lines)
