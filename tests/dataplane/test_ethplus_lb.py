"""Path selection of ethplus.p4 in every mode, and fast failover in every mode.

The statistical halves of issue 4's acceptance: ECMP keeps a flow on one port
and spreads many flows evenly; spray spreads one flow's packets evenly; flowlet
keeps a burst together and moves a new flowlet to the least-loaded port;
adaptive follows probes; a port marked down is never chosen in any mode.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from scapy.layers.l2 import Ether

from tests.support.dataplane import ethplus_frame, probe_frame, roce_frame
from traffic.layers import LB_ADAPTIVE, LB_ECMP, LB_FLOWLET, LB_SPRAY, EthPlus

UPLINKS = [2, 3, 4, 5]
ALL_MODES = [LB_ECMP, LB_SPRAY, LB_FLOWLET, LB_ADAPTIVE]


def within(used: Counter[int], ports: list[int], tolerance: float) -> bool:
    total = sum(used.values())
    mean = total / len(ports)
    return set(used) == set(ports) and all(abs(used[p] - mean) <= tolerance * mean for p in ports)


def fabric(make_switch, mode: int, ports: list[int] = UPLINKS, **cfg: int):
    sw = make_switch()
    sw.set_mode(mode, **cfg)
    sw.add_group(1, ports)
    sw.route_eid(700, 1, dst_index=7)
    sw.route_ipv4(0x0A010000, 16, 1, dst_index=7)
    return sw


def test_ecmp_keeps_a_flow_on_one_port(make_switch) -> None:
    sw = fabric(make_switch, LB_ECMP)
    for entropy in (0x0001, 0x1234, 0xBEEF):
        used = sw.ports_used(ethplus_frame(entropy=entropy, seq=s) for s in range(30))
        assert len(used) == 1, used
    for sport in (1000, 50000):
        used = sw.ports_used(roce_frame(sport=sport) for _ in range(30))
        assert len(used) == 1, used


@pytest.mark.parametrize("kind", ["ethplus", "roce"])
def test_ecmp_spreads_flows_over_all_ports_within_25_percent(make_switch, kind: str) -> None:
    sw = fabric(make_switch, LB_ECMP)
    rng = random.Random(4)
    if kind == "ethplus":
        frames = [ethplus_frame(src_id=rng.randrange(1024), entropy=rng.randrange(65536)) for _ in range(512)]
    else:
        frames = [roce_frame(sport=rng.randrange(49152, 65536), src=f"10.0.{rng.randrange(256)}.{rng.randrange(256)}")
                  for _ in range(512)]
    used = sw.ports_used(frames)
    assert within(used, UPLINKS, 0.25), used


def test_spray_spreads_one_flows_packets_evenly(make_switch) -> None:
    sw = fabric(make_switch, LB_SPRAY)
    order = [sw.send_one(1, ethplus_frame(entropy=7, seq=s))[0] for s in range(400)]
    used = Counter(order)
    assert set(used) == set(UPLINKS)
    assert max(used.values()) - min(used.values()) <= 1, used
    # round robin: each window of 4 consecutive packets covers the whole group
    assert all(sorted(order[i:i + 4]) == UPLINKS for i in range(0, 400, 4))
    # IPv4/RoCE is sprayed the same way
    used_roce = sw.ports_used(roce_frame(sport=1234) for _ in range(200))
    assert max(used_roce.values()) - min(used_roce.values()) <= 1, used_roce


def test_flowlet_keeps_a_burst_together_and_moves_new_flowlets_to_least_loaded(make_switch) -> None:
    sw = fabric(make_switch, LB_FLOWLET, gap_us=50)
    for port, depth in {2: 30, 3: 10, 4: 20, 5: 40}.items():
        sw.load_port(port, depth)

    # first flowlet: least loaded is port 3; the burst (packets 5 us apart) stays there
    burst = []
    for s in range(20):
        burst.append(sw.send_one(1, ethplus_frame(entropy=99, seq=s))[0])
        sw.h.advance(5)
    assert burst == [3] * 20

    # port 3 becomes the most loaded, 5 the least: within the gap nothing moves ...
    sw.load_port(3, 60)
    sw.load_port(5, 1)
    sw.h.advance(5)
    assert sw.send_one(1, ethplus_frame(entropy=99, seq=20))[0] == 3
    # ... after an idle gap longer than 50 us the next packet starts a new flowlet on port 5
    sw.h.advance(80)
    second = []
    for s in range(21, 31):
        second.append(sw.send_one(1, ethplus_frame(entropy=99, seq=s))[0])
        sw.h.advance(5)
    assert second == [5] * 10


def test_flowlet_separate_flows_with_equal_load_spread(make_switch) -> None:
    sw = fabric(make_switch, LB_FLOWLET, gap_us=50)
    rng = random.Random(7)
    used = sw.ports_used(ethplus_frame(src_id=rng.randrange(1024), entropy=rng.randrange(65536))
                         for _ in range(256))
    assert set(used) == set(UPLINKS), used


def test_adaptive_follows_probe_updates(make_switch) -> None:
    sw = fabric(make_switch, LB_ADAPTIVE, timeout_us=1000)
    rng = random.Random(3)

    def data_ports() -> set[int]:
        return set(sw.ports_used(ethplus_frame(entropy=rng.randrange(65536)) for _ in range(40)))

    # a probe is consumed (never forwarded when no probe group is configured)
    assert sw.send(4, probe_frame(dst_index=7, qdepth=12)) == []
    assert data_ports() == {4}
    assert sw.register("MyIngress.lb.best_port", 7) == 4
    assert sw.register("MyIngress.lb.best_qdepth", 7) == 12

    sw.send(2, probe_frame(dst_index=7, qdepth=3))       # better path: follow it
    assert data_ports() == {2}
    sw.send(5, probe_frame(dst_index=7, qdepth=8))       # worse than 3: ignored
    assert data_ports() == {2}
    sw.send(2, probe_frame(dst_index=7, qdepth=50))      # the best hop got worse ...
    sw.send(5, probe_frame(dst_index=7, qdepth=8))       # ... so port 5 now wins
    assert data_ports() == {5}

    # the local queue of the port a probe arrives on counts too: port 3 is deep
    sw.load_port(3, 100)
    sw.send(3, probe_frame(dst_index=7, qdepth=0))
    assert sw.register("MyIngress.lb.best_port", 7) == 5
    assert data_ports() == {5}

    # knowledge older than the timeout is not trusted: fall back to least loaded live candidate
    for port, depth in {2: 9, 4: 1, 5: 30}.items():
        sw.load_port(port, depth)
    sw.h.advance(2000)
    assert data_ports() == {4}
    # and any fresh probe is accepted again
    sw.send(2, probe_frame(dst_index=7, qdepth=70))
    assert data_ports() == {2}


def test_adaptive_probe_is_replicated_to_the_probe_group_but_not_back(make_switch) -> None:
    sw = fabric(make_switch, LB_ADAPTIVE, mgrp=5)
    sw.h.state.pre.insert_group(5, [(p, 0) for p in (1, 2, 3)])
    out = sw.send(2, probe_frame(dst_index=7, qdepth=4))
    assert sorted(p for p, _ in out) == [1, 3]
    for _, data in out:
        e = Ether(data)[EthPlus]
        assert e.hop_limit == 3


@pytest.mark.parametrize("mode", ALL_MODES)
def test_failover_dead_port_never_chosen(make_switch, mode: int) -> None:
    sw = fabric(make_switch, mode, gap_us=50)
    rng = random.Random(mode)
    if mode == LB_ADAPTIVE:
        sw.send(3, probe_frame(dst_index=7, qdepth=0))  # make the doomed port the best hop
    frames = [ethplus_frame(src_id=rng.randrange(1024), entropy=rng.randrange(65536)) for _ in range(200)]
    before = sw.ports_used(frames)
    assert 3 in before
    sw.set_down(3)
    after = sw.ports_used(frames)
    assert 3 not in after
    assert sum(after.values()) == 200                     # nothing lost: the others take over
    assert set(after) == {2, 4, 5}                        # ... all of them
    roce_after = sw.ports_used(roce_frame(sport=rng.randrange(65536)) for _ in range(100))
    assert 3 not in roce_after and sum(roce_after.values()) == 100
    # all candidates down: dropped and counted as "no live port" (reason 3)
    for p in UPLINKS:
        sw.set_down(p)
    assert sw.send(1, ethplus_frame()) == []
    assert sw.counter("MyIngress.drop_reason_counter", 3)[0] == 1
    # port back up: usable again (flowlet: once the flows' current flowlets end)
    sw.set_down(3, False)
    sw.h.advance(1000)
    assert 3 in sw.ports_used(frames)


def test_telemetry_counts_and_path_max_qdepth(make_switch) -> None:
    sw = fabric(make_switch, LB_SPRAY, ports=[2])
    sw.h.set_queue_depth(2, 37)
    port, data = sw.send_one(1, ethplus_frame())
    e = Ether(data)[EthPlus]
    assert (port, e.max_qdepth, e.hop_limit) == (2, 37, 7)
    # a larger value already in the header is kept (the path maximum)
    frame = bytearray(ethplus_frame())
    frame[14 + 6:14 + 8] = (500).to_bytes(2, "big")
    assert Ether(sw.send_one(1, bytes(frame))[1])[EthPlus].max_qdepth == 500
    assert sw.register("MyEgress.telemetry.qdepth_max", 2) == 37
    assert sw.register("port_qdepth", 2) == 37
    assert sw.counter("MyEgress.telemetry.tx_port_counter", 2)[0] == 2
    assert sw.counter("MyIngress.rx_port_counter", 1) == (2, 2 * len(ethplus_frame()))
