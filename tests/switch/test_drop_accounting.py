"""Nothing vanishes without a counter: receive-ring overruns and malformed frames are accounted for."""

from __future__ import annotations

import signal
import time

import pytest
from scapy.all import IP, UDP, Ether, Raw

from tests.support.switch import BASIC_L3

pytestmark = pytest.mark.netns

OFFERED = 3000  # frames sent while the switch is stopped: far more than its 1 MB ring holds (512 slots)


def test_ring_overruns_are_counted_and_kept_in_the_identity(lab, start_switch, send) -> None:
    sw = start_switch(str(BASIC_L3), "--rx-ring-mb", "2", grpc=False)  # 2 ports: a 1 MB ring each
    frames = [bytes(Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:01:01") / IP(dst="10.9.9.9") / UDP()
                    / Raw(b"%05d" % i)) for i in range(OFFERED)]
    sw.proc.signal(signal.SIGSTOP)  # the switch reads nothing: frames beyond the ring are lost in the kernel
    try:
        assert send(1, frames) == OFFERED
    finally:
        sw.proc.signal(signal.SIGCONT)
    time.sleep(1.0)
    assert sw.stop()
    p1 = sw.stats()["ports"]["1"]
    ring = p1["dropped_by_reason"]["rx_ring"]
    assert ring > 0, "the kernel's ring drops were not counted"
    assert p1["received"] == OFFERED  # what the kernel took for the port: read by the switch or lost
    assert p1["forwarded"] + p1["to_cpu"] + p1["dropped"] == p1["received"]
    assert p1["dropped_by_reason"]["pipeline"] == OFFERED - ring  # no route: the program dropped the rest


def test_malformed_frames_count_as_malformed(lab, start_switch, send, routed_basic_l3) -> None:
    sw = start_switch("--no-p4")
    with routed_basic_l3(sw):
        good = bytes(Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:01:01") / IP(src="10.0.1.1", dst="10.0.2.2")
                     / UDP() / Raw(b"x" * 20))
        truncated = good[:14 + 8]  # IPv4 ethertype, 8 of the 20 header bytes: the parser fails
        no_route = bytes(Ether(dst="00:00:00:00:00:aa", src="00:00:00:00:01:01") / IP(dst="10.9.9.9") / UDP())
        assert send(1, [good] * 3 + [truncated] * 4 + [no_route] * 2, rate=1000) == 9
        time.sleep(0.5)
    assert sw.stop()
    p1 = sw.stats()["ports"]["1"]
    assert p1["received"] == 9 and p1["forwarded"] == 3, p1
    assert p1["dropped_by_reason"]["malformed"] == 4
    assert p1["dropped_by_reason"]["pipeline"] == 2
