"""The link layer in the virtual fabric: LLR repairs every link error of a ring all-reduce hop by hop."""

from __future__ import annotations

import math

from controller.policies import make_policy
from linklayer import LinkCounters, LinkLayerConfig
from tests.support.vfabric import Replayed, replay
from topologies.builtins import erack
from traffic.replay import pattern_plan
from vfabric.fabric import FabricConfig

FER = 1e-3


def ring(raw: dict | None, queue_depth: int = 512) -> Replayed:
    topo = erack(gpus=8, planes=2, radix=8, rate_gbps=400, delay_us=0.5)
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, 1 << 20, 1, "ring", planes=2, slices=2)
    return replay(topo, plan, fabric=FabricConfig(queue_depth=queue_depth,
                                                  link_layer=LinkLayerConfig.parse(raw)))


def totals(got: Replayed) -> LinkCounters:
    tot = LinkCounters()
    for _node, _port, lp in got.fabric.link_ports:
        tot.add(lp.counters)
    return tot


def test_llr_loses_nothing_end_to_end_and_replays_once_per_error() -> None:
    got = ring({"frame_error_rate": FER, "llr": True})
    rec = got.metrics.records[0]
    assert rec["complete"] and rec["packets_lost"] == 0  # transport `none`: nothing repairs end to end
    c = totals(got)
    assert c.rx_bad > 0 and c.llr_tx_discard == 0 and c.llr_tx_best_effort == 0
    # every corrupted data frame costs one go-back-N replay (a few lost NAKs and tails: the replay timer);
    # the number is binomial in the data frames on the wire
    on_wire = c.llr_tx_ok + c.llr_tx_replay
    mean, sd = FER * on_wire, math.sqrt(on_wire * FER * (1 - FER))
    assert abs(c.llr_replays - mean) <= 4 * sd, (c.llr_replays, mean, sd)
    assert c.llr_rx_ok == c.llr_tx_ok


def test_errors_without_llr_are_lost_end_to_end() -> None:
    got = ring({"frame_error_rate": FER})
    c = totals(got)
    assert c.rx_bad > 0 and c.llr_replays == 0
    assert got.metrics.records[0]["packets_lost"] == c.rx_bad


def test_llr_without_errors_changes_only_the_bytes() -> None:
    plain, llr = ring(None), ring({"llr": True})
    assert not plain.fabric.link_ports
    a, b = plain.metrics.records[0], llr.metrics.records[0]
    assert a["complete"] and b["complete"] and b["packets_lost"] == 0
    assert a["time_s"] < b["time_s"] < a["time_s"] * 1.05  # 8 shim bytes a frame and the ACKs
    assert totals(llr).llr_replays == 0


def test_reruns_are_identical() -> None:
    runs = [ring({"frame_error_rate": FER, "llr": True}) for _ in range(2)]
    assert runs[0].metrics.records == runs[1].metrics.records
    assert [lp.counters for *_k, lp in runs[0].fabric.link_ports] == \
        [lp.counters for *_k, lp in runs[1].fabric.link_ports]


def test_link_down_with_llr_flushes_the_replay_buffer() -> None:
    """A link that goes down takes its replay buffer with it (counted as discards); the transport repairs."""
    from topologies.faults import Fault
    from traffic.records import HostConfig
    from vfabric.control import ControlPlane
    from vfabric.fabric import VirtualFabric
    from vfabric.run import VirtualLimits, VirtualRun

    topo = erack(gpus=4, planes=1, radix=4, rate_gbps=400, delay_us=0.5)
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, 1 << 20, 1, "ring")
    hosts = HostConfig(transport="sr", transport_params={"rto_s": 20e-6, "rto_init_s": 20e-6, "ack_delay_s": 1e-6,
                                                         "reorder_s": 4e-6})
    fab = VirtualFabric(topo, FabricConfig(queue_depth=512, link_layer=LinkLayerConfig.parse({"llr": True})), hosts)
    with ControlPlane(fab, make_policy("ecmp")) as control:
        control.start()
        run = VirtualRun(fab, control, VirtualLimits(time_limit_s=0.01, control_delay_s=5e-6))
        out = run.run(plan, HostConfig(flow_rate_bps=400e9),
                      [Fault(at_s=5e-6, action="link_down", a="gpu0", b="p0", for_s=10e-6)])
    from traffic.metrics import summarize

    s = summarize(out.result).summary
    assert s["complete"] and s["packets_lost"] == 0  # the transport repaired what the dead link lost
    tot = LinkCounters()
    for _node, _port, lp in fab.link_ports:
        tot.add(lp.counters)
    assert tot.llr_tx_discard > 0 and tot.rx_bad == 0
