"""Bring-up of the bigger built-in and of the adaptive policy on real switches: all pairs reachable on
`erack --gpus 16 --planes 4` (every plane), and on a leaf-spine the probe sender makes every leaf learn a
spine towards every remote endpoint (read back from the switches' registers)."""

from __future__ import annotations

import shutil

import pytest
from p4.v1 import p4runtime_pb2 as pb

from controller.probes import PROBE_MGRP
from ethlab.bringup import check_reachability, running_fabric
from tests.support.fabric import wait_for
from topologies import load

pytestmark = pytest.mark.netns


def test_erack_16_gpus_4_planes_all_pairs() -> None:
    topo = load("erack", gpus=16, planes=4)
    with running_fabric(topo, controller_options={"port_poll_s": None}) as fab:
        assert fab.entries > 0
        reach = check_reachability(fab)
        assert reach.ok, reach.failed[:10]
        assert reach.tried == {plane: 16 * 15 for plane in range(4)}


def test_adaptive_probes_teach_every_leaf_a_spine() -> None:
    with running_fabric(load("leafspine"), policy="adaptive", controller_options={"port_poll_s": None}) as fab:
        ctl = fab.controller
        remote = {"leaf1": (3, 4), "leaf2": (1, 2)}  # endpoint ids behind the other leaf

        def learnt() -> bool:
            for leaf, eids in remote.items():
                valid = ctl.connection(leaf).read_register("best_valid")
                if not all(valid[e] == 1 for e in eids):
                    return False
            return True

        assert wait_for(learnt, timeout=20, step=0.2)
        for leaf, eids in remote.items():
            ports = ctl.connection(leaf).read_register("best_port")
            assert all(ports[e] in (3, 4) for e in eids)  # an uplink, never a host port
        assert ctl.policy.sender is not None and ctl.policy.sender.sent > 0
        for spine in ("spine1", "spine2"):  # transit switches pass probes on to the other leaves
            [pre] = list(ctl.connection(spine).read(ctl.connection(spine).multicast_group(PROBE_MGRP, [])))
            assert sorted(r.egress_port for r in pre.packet_replication_engine_entry.multicast_group_entry.replicas) \
                == [1, 2]
        [lb] = [e.table_entry for e in ctl.connection("leaf1").read(pb.TableEntry(
            table_id=ctl.connection("leaf1").index.table("lb_config").preamble.id, is_default_action=True))]
        assert [int.from_bytes(p.value, "big") for p in lb.action.action.params][0] == 3  # adaptive mode
        reach = check_reachability(fab)
        assert reach.ok, reach.failed


@pytest.mark.bmv2
@pytest.mark.skipif(not (shutil.which("simple_switch_grpc") and shutil.which("p4c-bm2-ss")),
                    reason="BMv2 path: needs simple_switch_grpc and p4c-bm2-ss on PATH (not installed here)")
def test_leafspine_on_bmv2_all_pairs() -> None:
    """The BMv2 path end to end: compile with p4c, start simple_switch_grpc with queue rates (Thrift),
    push, install (ECMP members and selector groups included, read back), ping every pair; then a failed
    link (liveness register over Thrift, reroute) still leaves every pair reachable, and a register read
    answers."""
    with running_fabric(load("leafspine"), target="bmv2", rate_scale=1e-3,
                        controller_options={"port_poll_s": None}) as fab:
        reach = check_reachability(fab)
        assert reach.ok, reach.failed
        ctl = fab.controller
        leaf = ctl.connection("leaf1")
        groups = [e.action_profile_group for e in leaf.read(leaf.group("ecmp_selector", 0, []))]
        profile = groups[0].action_profile_id if groups else 0
        members = {e.action_profile_member.member_id
                   for e in leaf.read(pb.ActionProfileMember(action_profile_id=profile))}
        assert groups and any(len(g.members) == 2 for g in groups)  # a group spreading over both spines
        assert {m.member_id for g in groups for m in g.members} <= members
        ctl.link_down("leaf1", "spine1")
        assert ctl.connection("leaf1").read_register("port_down")[3] == 1
        reach = check_reachability(fab)
        assert reach.ok, reach.failed
        ctl.link_up("leaf1", "spine1")
        assert ctl.connection("leaf1").read_register("port_down")[3] == 0
