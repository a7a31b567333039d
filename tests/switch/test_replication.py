"""Multicast copies through the traffic manager, packet-in and packet-out through the CPU port."""

from __future__ import annotations

import time

import pytest
from scapy.all import Ether, Raw

from tests.support.switch import FLOOD_CPU, Capture, Switch, compiled, send_frames

pytestmark = pytest.mark.netns


def test_multicast_packet_in_and_packet_out(lab3, tmp_path) -> None:
    lab = lab3
    sw = Switch(lab, tmp_path, "--no-p4", "--cpu-port", "255")
    p4info, config = compiled(FLOOD_CPU)
    conn = sw.connect(p4info)
    try:
        conn.set_pipeline(device_config=config)
        conn.insert(conn.multicast_group(1, [2, 3]))

        mcast = [bytes(Ether(dst="01:00:5e:00:00:01", src="00:00:00:00:01:01", type=0x88B6) / Raw(b"m%03d" % i))
                 for i in range(10)]
        caps = [Capture(lab, h, tmp_path, count=len(mcast), max_seconds=5, idle=1.0) for h in (2, 3)]
        send_frames(lab, tmp_path, 1, mcast)
        for cap in caps:
            got, _ = cap.result()
            assert got == mcast

        punt = bytes(Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:01:01", type=0x88B7) / Raw(b"to-controller"))
        send_frames(lab, tmp_path, 1, [punt])
        pin = conn.packet_in(timeout=3.0)
        assert pin is not None
        payload, meta = pin
        assert payload == punt and meta["ingress_port"] == 1

        out_frame = bytes(Ether(dst="00:00:00:00:03:03", src="00:00:00:00:00:aa", type=0x88B8) / Raw(b"from-ctl"))
        cap3 = Capture(lab, 3, tmp_path, count=1, max_seconds=5)
        conn.packet_out(out_frame, egress_port=3, _pad=0)
        got, _ = cap3.result()
        assert got == [out_frame]
        time.sleep(0.1)
    finally:
        conn.close()
        clean = sw.stop()
        sw.proc.close()
    assert clean
    st = sw.stats()
    p1 = st["ports"]["1"]
    assert p1["received"] == len(mcast) + 1
    assert p1["forwarded"] == len(mcast)  # one fate per received packet, however many copies
    assert p1["to_cpu"] == 1
    assert st["ports"]["2"]["transmitted"] == len(mcast)
    assert st["ports"]["3"]["transmitted"] == len(mcast) + 1
    cpu = st["ports"]["255"]
    assert cpu["received"] == 1 and cpu["forwarded"] == 1 and cpu["transmitted"] == 1
