"""Flow control against closed-form models, in virtual time (nothing fitted).

CBFC: a flow whose first hop has `credits` cells of one frame each can have at most `credits` frames between
sending one and hearing that it left the switch's buffer, so it runs at min(line rate, credits × cell / credit
loop time). PFC: a 4→1 incast through one switch port loses nothing when the headroom above XOFF holds what
the senders put on the wire before the pause stops them (`linklayer.pfc.headroom_bytes`), and loses frames
without that headroom."""

from __future__ import annotations

import json

import pytest

from linklayer.config import LinkLayerConfig
from linklayer.pfc import headroom_bytes
from tests.support.vfabric import replay
from topologies.builtins import erack
from traffic.frames import FORMATS, Addr
from traffic.replay import pattern_plan
from vfabric.fabric import FabricConfig
from vfabric.hosts import HostConfig
from vfabric.links import wire_bytes

RATE = 100e9
DELAY_NS = 1000
LATENCY_NS = 400


def _full_frame_wire() -> int:
    fmt = FORMATS["roce"]
    a = Addr("02:00:00:00:00:01", "10.0.0.1", 1, 0), Addr("02:00:00:00:00:02", "10.0.0.2", 2, 0)
    return wire_bytes(len(fmt.build(*a, 1, fmt.payload_per_packet(1500), True, None).buf))


def _one_flow(ll: LinkLayerConfig, size: int):
    topo = erack(gpus=2, planes=1, radix=4, rate_gbps=RATE / 1e9, delay_us=DELAY_NS / 1000)
    plan = pattern_plan("incast", [1, 2], size, 1, None, sink=2)
    return replay(topo, plan, fabric=FabricConfig(pipeline_latency_ns=LATENCY_NS, link_layer=ll))


@pytest.mark.parametrize("credits", [4, 16, 40])
def test_cbfc_limited_flow_runs_at_credits_over_loop_time(credits: int) -> None:
    cell = _full_frame_wire()  # one cell per full frame: credits × cell is what may be in flight
    interval = 10
    ll = LinkLayerConfig.parse({"flow_control": "cbfc", "cbfc": {"cell_bytes": cell, "credits": credits,
                                                                  "update_interval_ns": interval}}, max_frame=cell)
    size = 4 << 20
    got = _one_flow(ll, size)
    rec = got.metrics.records[0]
    assert rec["complete"] and rec["packets_lost"] == 0
    ns_per_byte = 8e9 / RATE
    # the credit loop: the frame's serialisation and cable, the switch pipeline, half an update interval on
    # average, the update's serialisation and the cable back (the switch's egress is free: it leaves at once)
    loop_ns = cell * ns_per_byte + DELAY_NS + LATENCY_NS + interval / 2 + wire_bytes(60) * ns_per_byte + DELAY_NS
    model_bps = min(RATE, credits * cell * 8e9 / loop_ns)
    payload = FORMATS["roce"].payload_per_packet(1500)
    frames = -(-size // payload)
    rate_bps = frames * cell * 8 / rec["time_s"]
    assert rate_bps == pytest.approx(model_bps, rel=0.02)
    totals = got.fabric.flow_totals()
    assert totals["buffer_drops"] == 0 and totals["credit_updates_received"] > 0
    if model_bps < RATE:
        assert totals["credit_stall_ns"] > 0  # the sender waited for credits


def _incast(headroom: int) -> tuple[dict, dict]:
    topo = erack(gpus=5, planes=1, radix=8, rate_gbps=RATE / 1e9, delay_us=DELAY_NS / 1000)
    plan = pattern_plan("incast", [1, 2, 3, 4, 5], 300 * 1024, 1, None, sink=1)
    ll = LinkLayerConfig.parse({"flow_control": "pfc", "pfc": {"xoff_bytes": 40_000, "xon_bytes": 20_000,
                                                                "headroom_bytes": headroom}})
    got = replay(topo, plan, hosts=HostConfig(loss_grace_ns=500_000),
                 fabric=FabricConfig(queue_depth=40, pipeline_latency_ns=LATENCY_NS, link_layer=ll))
    return got.metrics.summary, got.fabric.flow_totals()


def test_pfc_headroom_from_the_formula_loses_nothing_in_a_4_to_1_incast() -> None:
    need = headroom_bytes(RATE, DELAY_NS, LATENCY_NS)
    summary, totals = _incast(need)
    assert summary["loss_fraction"] == 0 and not summary["timed_out"]
    assert totals["buffer_drops"] == 0
    assert totals["pause_frames"] > 0 and totals["pause_received"] == totals["pause_frames"]
    assert totals["paused_ns"] > 0
    assert totals["max_buffer_bytes"] > 40_000  # the headroom was used


@pytest.mark.parametrize("headroom", [0, 8_000])
def test_pfc_without_headroom_drops(headroom: int) -> None:
    summary, totals = _incast(headroom)
    assert totals["pause_frames"] > 0  # it paused, but too late for what was on the wire
    assert totals["buffer_drops"] > 0 and summary["packets_lost"] > 0


@pytest.mark.parametrize("fc", ["pfc", "cbfc"])
def test_flow_control_reruns_are_identical(fc: str) -> None:
    def once() -> str:
        topo = erack(gpus=5, planes=1, radix=8, rate_gbps=RATE / 1e9, delay_us=DELAY_NS / 1000)
        plan = pattern_plan("incast", [1, 2, 3, 4, 5], 100 * 1024, 1, None, sink=1)
        ll = LinkLayerConfig.parse({"flow_control": fc, "pfc": {"xoff_bytes": 20_000, "xon_bytes": 10_000},
                                    "cbfc": {"credits": 64}})
        got = replay(topo, plan, fabric=FabricConfig(link_layer=ll))
        flows = [vars(f) for f in got.result.flows]
        return json.dumps([got.metrics.records, flows, got.fabric.flow_totals()], sort_keys=True, default=str)

    first = once()
    assert '"pause_frames": 0' not in first or fc == "cbfc"
    assert first == once()
