"""Choosing coupled partitions (vfabric/cut.py) and what the window engine refuses (vfabric/window.py), no MPI
needed: the automatic split of a leaf/spine fabric, the lookahead, and clear errors for a partition that cuts
a host link, a zero-delay cut, a coupling without delay, a frame arriving inside its window."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ethlab.experiment.spec import SpecError, parse_spec
from topologies.builtins import leafspine
from traffic.replay import pattern_plan
from vfabric.cut import CutError, link_lookahead_ns, plan_cut
from vfabric.fabric import FabricConfig, VirtualFabric
from vfabric.hosts import HostConfig
from vfabric.window import BoundaryError, WindowEngine


def _run(transport: str = "sr", delay_us: float = 0.5, pipeline_ns: int = 400, pattern: str = "all_reduce",
         leaves: int = 2) -> SimpleNamespace:
    topo = leafspine(leaves=leaves, spines=2, hosts_per_leaf=2, rate_gbps=100.0, delay_us=delay_us)
    fab = VirtualFabric(topo, FabricConfig(pipeline_latency_ns=pipeline_ns), HostConfig(transport=transport))
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    fab.endpoints.load(pattern_plan(pattern, eids, 64 * 1024, 1, "ring" if pattern == "all_reduce" else None), 1000)
    return SimpleNamespace(fabric=fab, control=SimpleNamespace(policy=None))


def test_leaf_spine_is_cut_between_leaves_with_the_lookahead_of_its_links() -> None:
    run = _run()
    cut = plan_cut(run, 2)
    assert not cut.reason
    assert cut.switch_rank == {"leaf1": 0, "spine1": 0, "leaf2": 1, "spine2": 1}
    # every host's NIC port with its leaf: h1, h2 under leaf1 (rank 0), h3, h4 under leaf2 (rank 1)
    assert sorted(cut.nic_rank.values()) == [0, 0, 1, 1]
    topo = run.fabric.topo
    assert sorted(str(topo.links[i].a.owner) + "-" + topo.links[i].b.owner for i in cut.cut_links) == [
        "leaf1-spine2", "leaf2-spine1"]
    # 500 ns propagation + 400 ns pipeline + a 64-byte frame (84 B on the wire) at 100 Gbit/s = 6.72 ns
    assert cut.lookahead_ns == link_lookahead_ns(100e9, 500, 400) == 906
    three = plan_cut(run, 3)
    assert sorted(three.switch_rank.values()) == [0, 1, 2, 2] and len(three.cut_links) == 4


def test_a_partition_that_cuts_a_host_link_is_refused_naming_it() -> None:
    with pytest.raises(CutError, match=r"cuts the host link h3:0-leaf2:1 \(h3 on rank 0, leaf2 on rank 1\)"):
        plan_cut(_run(), 2, explicit=[["leaf1", "spine1", "spine2", "h3"], ["leaf2"]])


def test_a_zero_delay_cut_is_refused_naming_the_link() -> None:
    run = _run(delay_us=0.0, pipeline_ns=0)
    with pytest.raises(CutError, match=r"link leaf1-spine2 would be cut but has no propagation delay .*lookahead 0"):
        plan_cut(run, 2, explicit=[["leaf1", "spine1"], ["leaf2", "spine2"]])
    # chosen automatically, zero-delay links are never cut: here nothing is left to split
    assert "one piece" in plan_cut(run, 2).reason


def test_explicit_partition_mistakes_are_named() -> None:
    run = _run()
    with pytest.raises(CutError, match=r"switch\(es\) spine2 in no rank"):
        plan_cut(run, 2, explicit=[["leaf1", "spine1"], ["leaf2"]])
    with pytest.raises(CutError, match=r"lists 'leaf9', which is no switch or host"):
        plan_cut(run, 2, explicit=[["leaf1", "spine1", "leaf9"], ["leaf2", "spine2"]])
    with pytest.raises(CutError, match=r"lists 3 ranks, the run has 2"):
        plan_cut(run, 2, explicit=[["leaf1"], ["spine1"], ["leaf2", "spine2"]])


def test_transport_none_keeps_both_ends_of_a_flow_together() -> None:
    # under `none` the receiver's state reaches the sender in-process: the ring joins every host, so every leaf;
    # only the spines are left to cut away
    cut = plan_cut(_run(transport="none"), 2)
    assert cut.switch_rank == {"leaf1": 0, "leaf2": 0, "spine1": 1, "spine2": 1} and len(cut.cut_links) == 4
    with pytest.raises(CutError, match=r"switches leaf1 and leaf2 must share a rank \(under transport none"):
        plan_cut(_run(transport="none"), 2, explicit=[["leaf1", "spine1"], ["leaf2", "spine2"]])


def test_a_frame_arriving_inside_its_window_is_refused() -> None:
    run = _run()
    cut = plan_cut(run, 2)
    comm = SimpleNamespace(Get_rank=lambda: 1, Get_size=lambda: 2)
    engine = WindowEngine(run, cut, comm)
    cid = next(iter(engine.incoming))
    engine.last_end = 5000
    with pytest.raises(BoundaryError, match=r"arrives at 5000 ns, inside the window that ended at 5000 ns"):
        engine.insert([(6000, 1 << 40, cid, b"x" * 64), (5000, 1 << 40, cid, b"x" * 64)])


def test_partition_option_is_checked() -> None:
    raw: dict[str, Any] = {"name": "x", "topology": {"name": "leafspine"}, "clock": "virtual",
           "virtual": {"backend": "mpi", "partition": "planes"},
           "traffic": {"pattern": "all_to_all", "size": "16KiB"}, "policies": [{"name": "ecmp"}]}
    with pytest.raises(SpecError, match=r"virtual.partition: must be auto or coupled or a list of node-name lists"):
        parse_spec(raw)
    raw["virtual"]["partition"] = [["leaf1", "spine1"], ["leaf2", "spine2"]]
    assert parse_spec(raw).virtual["partition"] == [["leaf1", "spine1"], ["leaf2", "spine2"]]
