"""The aggregation job API over real P4Runtime: setup, isolation, bad input, restart, teardown."""

from __future__ import annotations

import pytest

import topologies
from controller.fabric import FabricController
from controller.inc import MGRP_BASE, SLOTS, IncError
from controller.policies import make_policy
from tests.inc.support import inc_fabric


def _tables(conn) -> tuple[set[int], set[tuple[int, int]]]:
    jobs = {int.from_bytes(te.match[0].exact.value, "big") for te in conn.read_table("inc_job")}
    members = {tuple(int.from_bytes(m.exact.value, "big") for m in te.match) for te in conn.read_table("inc_member")}
    return jobs, members  # type: ignore[return-value]


def test_jobs_are_written_isolated_refused_and_survive_a_restart() -> None:
    topo = topologies.load("erack", gpus=6, planes=1)
    with inc_fabric(topo) as (fab, control):
        ctl = control.controller
        assert ctl is not None
        conn = ctl.connection("p0")
        a = ctl.inc.setup(1, [1, 2, 3], slots=8)
        b = ctl.inc.setup(2, [4, 5, 6], slots=8)
        pa, pb_ = a.parts["p0"], b.parts["p0"]
        assert (pa.slot_base, pb_.slot_base) == (0, 8)  # disjoint ranges of one pool
        assert pa.is_top and pa.n_contrib == 3 and pa.level == 1
        jobs, members = _tables(conn)
        assert jobs == {1, 2} and len(members) == 6
        groups = {e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id
                  for e in conn.read(_mgrp_query())}
        assert {MGRP_BASE + 1, MGRP_BASE + 2} <= groups

        # bad input: refused with a clear error, nothing written
        with pytest.raises(IncError, match="overlap job 1") as err:
            ctl.inc.setup(3, [1, 2], slots=4, slot_base=4)
        assert err.value.code == "ALREADY_EXISTS"
        with pytest.raises(IncError, match="exists already"):
            ctl.inc.setup(1, [1, 2])
        with pytest.raises(IncError, match="no 250 free aggregation slots") as err:
            ctl.inc.setup(4, [1, 2], slots=250)
        assert err.value.code == "RESOURCE_EXHAUSTED"
        with pytest.raises(IncError, match="no endpoint 99"):
            ctl.inc.setup(5, [1, 99])
        with pytest.raises(IncError, match="at least 2 distinct members"):
            ctl.inc.setup(6, [1, 1])
        assert _tables(conn)[0] == {1, 2}

        # a restarted controller reads the jobs back and its reconciliation keeps them
        ctl.close()
        fresh = FabricController(topo, {n: s.address for n, s in control.servers.items()}, control.artifacts,
                                 make_policy("ecmp"), watch_switches=False, port_poll_s=None)
        try:
            fresh.start(reconcile=True)
            assert set(fresh.inc.jobs) == {1, 2}
            assert fresh.inc.jobs[1].members == (1, 2, 3) and fresh.inc.jobs[1].parts == a.parts
            assert _tables(fresh.connection("p0"))[0] == {1, 2}
            fresh.inc.teardown(1)
            assert _tables(fresh.connection("p0")) == ({2}, {(2, p) for p in (4, 5, 6)})
            # the freed range is given out again
            assert fresh.inc.setup(3, [1, 2], slots=8).parts["p0"].slot_base == 0
        finally:
            fresh.close()
            control.controller = None


def test_more_members_than_the_bitmap_holds_is_refused() -> None:
    topo = topologies.load("erack", gpus=65, planes=1, radix=72)
    with inc_fabric(topo) as (_fab, control):
        ctl = control.controller
        assert ctl is not None
        with pytest.raises(IncError, match="65 contributors at p0, more than the 64") as err:
            ctl.inc.setup(1, list(range(1, 66)))
        assert err.value.code == "OUT_OF_RANGE"
        assert not ctl.connection("p0").read_table("inc_job")
        assert SLOTS == 256


def test_two_levels_on_a_leaf_spine() -> None:
    topo = topologies.load("leafspine")
    with inc_fabric(topo) as (_fab, control):
        ctl = control.controller
        assert ctl is not None
        eids = sorted(ep.eid for ep in topo.endpoints.values())
        job = ctl.inc.setup(7, eids, slots=4)
        tops = [p for p in job.parts.values() if p.is_top]
        assert len(tops) == 1 and tops[0].level == 2 and tops[0].switch.startswith("spine")
        leaves = [p for p in job.parts.values() if not p.is_top]
        assert {p.level for p in leaves} == {1} and all(p.up_port for p in leaves)
        assert sum(p.n_contrib for p in leaves) == len(eids) and tops[0].n_contrib == len(leaves)


def _mgrp_query():
    from p4.v1 import p4runtime_pb2 as pb

    pre = pb.PacketReplicationEngineEntry()
    pre.multicast_group_entry.multicast_group_id = 0
    return pre
