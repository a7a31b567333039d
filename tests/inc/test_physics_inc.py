"""Physics of in-network all-reduce in virtual time on an idle ERack+ plane at 400 Gbit/s: completion as the
α-β model says, and the bus bandwidth advantage over ring measured side by side in one run."""

from __future__ import annotations

import math

import topologies
from tests.inc.support import inc_fabric
from traffic.collectives import make_schedule
from traffic.inc import wire
from traffic.metrics import summarize
from traffic.records import HostConfig, PlannedCollective
from vfabric.links import wire_bytes
from vfabric.run import VirtualLimits, VirtualRun
from vfabric.switch import DEFAULT_PIPELINE_LATENCY_NS

RATE = 400e9


def inc_model_s(size: int, planes: int, rate_bps: float = RATE, pipeline_ns: int = DEFAULT_PIPELINE_LATENCY_NS,
                link_delay_ns: float = 0.0) -> float:
    """α + β·bytes for in-network all-reduce: each rank's NIC port sends its share of the chunks back to back
    (β: one frame's wire time per chunk) and the last chunk's result needs one more frame time down, the
    switch pipeline and the cables (α)."""
    chunks = math.ceil(math.ceil(size / 4) / wire.ELEMS)
    per_plane = math.ceil(chunks / planes)
    t_frame = wire_bytes(wire.FRAME_BYTES) * 8 / rate_bps
    return (per_plane + 1) * t_frame + (pipeline_ns + 2 * link_delay_ns) * 1e-9


def test_inc_matches_the_alpha_beta_model_and_beats_ring_by_1_7x() -> None:
    n, size = 16, 1 << 20
    topo = topologies.load("erack", gpus=n, planes=1, rate_gbps=RATE / 1e9)
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = [PlannedCollective("ring", 0, make_schedule("all_reduce", eids, size, "ring")),
            PlannedCollective("inc", 0, make_schedule("all_reduce", eids, size, "inc"), after=(("ring", 0),))]
    with inc_fabric(topo) as (fab, control):
        outcome = VirtualRun(fab, control, VirtualLimits(time_limit_s=0.01)).run(plan, HostConfig(flow_rate_bps=RATE))
    ring, inc = summarize(outcome.result).records
    assert ring["complete"] and inc["complete"] and inc["inc"]["verified"]
    model = inc_model_s(size, 1)
    assert abs(inc["time_s"] - model) / model < 0.03, (inc["time_s"], model)
    ratio = inc["busbw_GBps"] / ring["busbw_GBps"]
    assert ratio >= 1.7, (inc["busbw_GBps"], ring["busbw_GBps"])
    # bytes on the wire per rank: inc sends its vector once (plus headers), ring 2(n-1)/n times
    assert inc["inc"]["wire_bytes_per_rank"] == math.ceil(size / 1024) * wire.FRAME_BYTES
