"""A PFC deadlock from a cyclic buffer dependency, and the watchdog that breaks it (virtual time).

topologies/data/pfc-ring.yaml: five switches in a ring, host i sends to host i+2 (two hops clockwise). Every
ring link carries two line-rate flows, so every ring port's ingress buffer crosses XOFF; each pauses the switch
before it, whose queue towards it holds frames that wait for the next switch, and so on round the ring: no
buffer can drain, and nothing moves again — the flows stop for good a few dozen frames in. With the watchdog,
every priority paused longer than `watchdog_ns` is found, counted and released; the frames pushed into full
buffers meanwhile are dropped (counted as buffer drops) and the reliable transport repairs them."""

from __future__ import annotations

from pathlib import Path

import topologies
from linklayer.config import LinkLayerConfig
from tests.support.vfabric import replay
from traffic.records import PlannedCollective
from traffic.schedule import ScheduleBuilder
from vfabric.fabric import FabricConfig
from vfabric.hosts import HostConfig
from vfabric.run import VirtualLimits

RING = Path(__file__).resolve().parents[2] / "topologies" / "data" / "pfc-ring.yaml"
SIZE = 1 << 20
FAST_RTO = {"rto_ns": 100_000, "rto_init_ns": 100_000, "ack_delay_ns": 5_000}


def _ring(watchdog_ns: int, limit_s: float):
    topo = topologies.load(str(RING))
    b = ScheduleBuilder([SIZE])
    for i in range(1, 6):
        b.add(i, (i + 1) % 5 + 1, [0])
    ranks = [1, 2, 3, 4, 5]
    plan = [PlannedCollective("ring", 0, b.build("sendrecv", "two-hops", ranks, SIZE, ranks, ranks))]
    ll = LinkLayerConfig.parse({"flow_control": "pfc", "pfc": {"xoff_bytes": 20_000, "xon_bytes": 10_000,
                                                                "headroom_bytes": 40_000, "watchdog_ns": watchdog_ns}})
    return replay(topo, plan, hosts=HostConfig(transport="sr", transport_params=FAST_RTO),
                  fabric=FabricConfig(link_layer=ll), limits=VirtualLimits(time_limit_s=limit_s))


def test_cyclic_buffer_dependency_deadlocks_without_the_watchdog() -> None:
    got = _ring(0, 0.002)
    assert got.outcome.stopped_by == "virtual_time_limit"
    delivered = [f.delivered for f in got.result.flows]
    assert max(delivered) < 0.05 * got.result.flows[0].npkts  # stuck after a few dozen frames
    totals = got.fabric.flow_totals()
    assert totals["buffer_drops"] == 0 and totals["watchdog_storms"] == 0
    # every ring port stayed paused to the end: 5 ring links x 2 ... at least the 5 clockwise senders
    assert totals["paused_ns"] >= 5 * 0.0015e9


def test_the_watchdog_breaks_the_deadlock() -> None:
    got = _ring(50_000, 0.02)
    assert got.outcome.stopped_by == "completed"
    assert all(f.complete for f in got.result.flows)
    totals = got.fabric.flow_totals()
    assert totals["watchdog_storms"] > 0 and totals["buffer_drops"] > 0  # released into full buffers
