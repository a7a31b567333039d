"""Physics of the virtual fabric against closed-form models: nothing in the model is fitted.

Every frame costs its bytes plus Ethernet's 24 wire bytes (preamble+SFD, FCS, inter-frame gap) at the
nominal rate; a hop adds the switch's pipeline latency and one store-and-forward serialisation."""

from __future__ import annotations

import pytest

from tests.support.vfabric import replay
from topologies.builtins import erack
from traffic.frames import FORMATS
from traffic.metrics import bus_factor
from traffic.records import PlannedCollective
from traffic.replay import pattern_plan
from traffic.schedule import ScheduleBuilder
from vfabric.fabric import FabricConfig
from vfabric.hosts import HostConfig
from vfabric.links import wire_bytes

RATE = 400e9
LATENCY_NS = 400


def frame_times_ns(nbytes: int, fmt: str = "roce", mtu: int = 1500) -> tuple[int, float]:
    """(packets, serialisation of all of them back to back in ns) for one transfer."""
    f = FORMATS[fmt]
    payload = f.payload_per_packet(mtu)
    n = max(1, -(-nbytes // payload))
    tail = nbytes - (n - 1) * payload
    frame_full = len(f.build(*_addrs(), 1, payload, True, None).buf)
    frame_tail = len(f.build(*_addrs(), 1, tail, True, None).buf)
    total = ((n - 1) * wire_bytes(frame_full) + wire_bytes(frame_tail)) * 8e9 / RATE
    return n, total


def _addrs():
    from traffic.frames import Addr

    return Addr("02:00:00:00:00:01", "10.0.0.1", 1, 0), Addr("02:00:00:00:00:02", "10.0.0.2", 2, 0)


def test_ring_allreduce_matches_alpha_beta_model() -> None:
    gpus, planes, size = 8, 2, 1 << 20
    topo = erack(gpus=gpus, planes=planes, radix=gpus, rate_gbps=RATE / 1e9, delay_us=0.5)
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, size, 1, "ring", planes=planes, slices=planes)  # one slice per plane
    got = replay(topo, plan, fabric=FabricConfig(pipeline_latency_ns=LATENCY_NS))
    rec = got.metrics.records[0]
    assert rec["complete"] and rec["packets_lost"] == 0
    # α-β: 2(n-1) dependent steps; each moves size/(n·planes) bytes per plane at line rate (frames + wire
    # overhead), plus one hop's latency: two propagation delays, the pipeline, one store-and-forward frame.
    step_bytes = size // (gpus * planes)
    _n, ser = frame_times_ns(step_bytes)
    _n1, one_frame = frame_times_ns(FORMATS["roce"].payload_per_packet(1500))
    hop = 2 * 500 + LATENCY_NS + one_frame
    model_s = 2 * (gpus - 1) * (ser + hop) / 1e9
    assert rec["time_s"] == pytest.approx(model_s, rel=0.02)
    busbw_model = size / model_s / 1e9 * bus_factor("all_reduce", gpus)
    assert rec["busbw_GBps"] == pytest.approx(busbw_model, rel=0.02)


def test_single_flow_throughput_is_line_rate_times_payload_ratio() -> None:
    topo = erack(gpus=2, planes=1, radix=2, rate_gbps=RATE / 1e9, delay_us=0.0)
    nbytes = 8 << 20
    b = ScheduleBuilder([nbytes])
    b.add(1, 2, [0])
    plan = [PlannedCollective("sendrecv", 0, b.build("sendrecv", "one-flow", [1, 2], nbytes, [1], [2]))]
    got = replay(topo, plan, hosts=HostConfig())
    flow = got.result.flows[0]
    assert flow.complete and flow.lost == 0
    fmt = FORMATS["roce"]
    payload = fmt.payload_per_packet(1500)
    frame = len(fmt.build(*_addrs(), 1, payload, True, None).buf)
    expected_bps = RATE * payload / wire_bytes(frame)
    got_bps = nbytes * 8 / flow.fct_s
    assert got_bps == pytest.approx(expected_bps, rel=0.01)
