"""Congestion in virtual time: a 3-to-1 incast into a 10 Gbit/s host link with a 40-packet queue. The P4
program marks ECN (its RED thresholds, installed by the controller), DCQCN senders (published time constants)
cut their rates and the loss falls; without marking the same senders lose most packets."""

from __future__ import annotations

from tests.support.vfabric import replay
from topologies.builtins import leafspine
from traffic.replay import pattern_plan
from vfabric.fabric import FabricConfig
from vfabric.hosts import HostConfig

ECN = {"kmin": 2, "kmax": 10, "pmax": 0.5}


def _incast(ecn: dict | bool, reaction: str):
    topo = leafspine(leaves=2, spines=2, hosts_per_leaf=2, rate_gbps=10, delay_us=1.0)
    plan = pattern_plan("incast", [1, 2, 3, 4], 300 * 1024, 1, None, sink=1)
    return replay(topo, plan, "ecmp", hosts=HostConfig(reaction=reaction, loss_grace_ns=500_000),
                  fabric=FabricConfig(queue_depth=40), ecn=ecn)


def test_ecn_marks_and_dcqcn_lower_loss() -> None:
    off = _incast(False, "none").metrics.summary
    marked_only = _incast(ECN, "none")
    dcqcn = _incast(ECN, "dcqcn")
    m, d = marked_only.metrics.summary, dcqcn.metrics.summary
    assert off["ecn_fraction"] == 0 and off["loss_fraction"] > 0.3  # 3 line-rate senders, one 10G port
    assert m["ecn_fraction"] > 0.5 and m["loss_fraction"] == off["loss_fraction"]  # marks alone change nothing
    assert d["ecn_fraction"] > 0 and sum(f.rate_cuts for f in dcqcn.result.flows) > 0
    assert d["loss_fraction"] < off["loss_fraction"] / 5
    # the queue at the sink's port was full: tail drops counted by the shared traffic manager
    assert sum(sw.drops["queue_full"] for sw in marked_only.fabric.switches.values()) == m["packets_lost"]
