"""In-network all-reduce in virtual time: real P4 (ethplus_inc.p4) under the controller, seeded data, every
rank checking every reduced chunk."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

import topologies
from tests.inc.support import inc_fabric
from traffic.inc.data import Vectors
from traffic.metrics import write_all
from traffic.records import HostConfig
from traffic.replay import pattern_plan
from vfabric.run import VirtualLimits, VirtualRun


def _run(topo, size: int, iterations: int = 1, loss: float = 0.0, limit_s: float = 0.01, **params):
    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = pattern_plan("all_reduce", eids, size, iterations=iterations, algorithm="inc", **params)
    with inc_fabric(topo) as (fab, control):
        eps = fab.endpoints
        if loss:
            rng = random.Random(7)
            lost = {"up": 0, "down": 0}
            send = eps._inc_send

            def lossy_send(eid: int, plane: int, frame: bytes) -> None:
                if rng.random() < loss:
                    lost["up"] += 1
                    return
                send(eid, plane, frame)

            eps._inc_send = lossy_send  # type: ignore[method-assign]
        run = VirtualRun(fab, control, VirtualLimits(time_limit_s=limit_s))
        if loss:
            orig_load = eps.load

            def load(plan, start_ns=0):
                orig_load(plan, start_ns)
                inc = eps.inc
                on_frame = inc.on_frame

                def lossy_frame(eid: int, frame: bytes) -> bool:
                    if rng.random() < loss:
                        lost["down"] += 1
                        return True
                    return on_frame(eid, frame)

                inc.on_frame = lossy_frame  # type: ignore[method-assign]

            eps.load = load  # type: ignore[method-assign]
        outcome = run.run(plan, HostConfig(flow_rate_bps=400e9))
        counters = {name: control.controller.connection(name).read_counter("inc_events")
                    for name in sorted(fab.switches)}
    return outcome, counters, (lost if loss else None)


def test_sums_verified_on_erack_two_planes_two_iterations(tmp_path: Path) -> None:
    topo = topologies.load("erack", gpus=4, planes=2)
    outcome, counters, _ = _run(topo, 256 * 1024 + 100, iterations=2, planes=2)
    assert outcome.stopped_by == "completed"
    metrics = write_all(tmp_path, outcome.result)
    data = json.loads((tmp_path / "metrics.json").read_text())
    chunks = -(-(256 * 1024 + 100) // 1024)
    for rec in data["records"]:
        assert rec["complete"] and rec["algorithm"] == "inc"
        assert rec["inc"]["verified"] and rec["inc"]["chunks"] == chunks
        assert rec["inc"]["results_checked"] == 4 * chunks and rec["inc"]["retransmissions"] == 0
    assert data["summary"]["inc"] == {"verified": True, "chunks": 2 * chunks, "retransmissions": 0,
                                      "slots_used": 128, "wrong_sums": 0}
    assert metrics.summary["complete"]
    # the switches did the adding: one completion per chunk and iteration, three absorbed contributions each
    completed = sum(c[1][0] for c in counters.values())
    absorbed = sum(c[0][0] for c in counters.values())
    assert completed == 2 * chunks and absorbed == 3 * 2 * chunks


def test_two_levels_on_a_leaf_spine() -> None:
    outcome, counters, _ = _run(topologies.load("leafspine"), 64 * 1024, limit_s=0.05)
    rec = outcome.result.collectives[0]
    assert outcome.stopped_by == "completed" and rec.inc is not None and rec.inc["verified"]
    assert rec.time_s is not None and abs(outcome.result.duration_s - rec.time_s) < 1e-9  # the run ends with it
    spine = [c for name, c in counters.items() if name.startswith("spine") and c[1][0]]
    leaves = [c for name, c in counters.items() if name.startswith("leaf")]
    assert len(spine) == 1 and spine[0][1][0] == 64  # the top level completed every chunk
    assert all(c[4][0] == 64 for c in leaves)  # each leaf passed every result down


def test_a_wrong_sum_fails_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """One rank sends data other than what the seed says: the switches add what they get, every rank's
    check finds the sums wrong, the collective is not complete."""
    real = Vectors.chunk

    def skewed(self: Vectors, rank_index: int, chunk: int) -> np.ndarray:
        v = real(self, rank_index, chunk)
        return v + 1 if rank_index == 0 and chunk == 3 else v

    monkeypatch.setattr(Vectors, "chunk", skewed)
    outcome, _, _ = _run(topologies.load("erack", gpus=3, planes=1), 8 * 1024)
    rec = outcome.result.collectives[0]
    assert rec.inc is not None and not rec.inc["verified"] and rec.inc["wrong_sums"] == 3
    from traffic.metrics import summarize

    m = summarize(outcome.result)
    assert not m.records[0]["complete"] and not m.summary["complete"] and not m.summary["inc"]["verified"]


def test_sums_right_with_one_percent_of_inc_frames_lost() -> None:
    topo = topologies.load("erack", gpus=4, planes=1)
    outcome, counters, lost = _run(topo, 512 * 1024, loss=0.01, planes=1, timeout_us=20.0)
    rec = outcome.result.collectives[0]
    assert lost is not None and lost["up"] > 5 and lost["down"] > 5
    assert outcome.stopped_by == "completed"
    assert rec.inc is not None and rec.inc["verified"] and rec.inc["wrong_sums"] == 0
    assert rec.inc["retransmissions"] >= lost["up"]
    sw = counters["p0"]
    assert sw[2][0] > 0 or sw[3][0] > 0  # duplicates dropped or results replayed: the recovery ran in P4
    assert sw[3][0] > 0  # lost results were sent again from the kept copy


def test_values_that_could_overflow_are_refused() -> None:
    with pytest.raises(ValueError, match="beyond the int32"):
        pattern_plan("all_reduce", [1, 2, 3], 4096, algorithm="inc", max_abs=2**30)


def test_small_messages_over_iterations_and_many_collectives_share_the_slot_pool() -> None:
    """8 chunks per iteration (fewer than the window) over three iterations; and five all-reduces in a row that
    together want more slots than a switch has: each gets a share, all verified."""
    topo = topologies.load("erack", gpus=3, planes=1)
    outcome, _, _ = _run(topo, 8 * 1024, iterations=3)
    assert outcome.stopped_by == "completed"
    assert all(c.inc is not None and c.inc["verified"] for c in outcome.result.collectives)
    from traffic.collectives import make_schedule
    from traffic.records import PlannedCollective

    eids = sorted(ep.eid for ep in topo.endpoints.values())
    plan = []
    for i in range(5):
        plan.append(PlannedCollective(f"ar{i}", 0, make_schedule("all_reduce", eids, 256 * 1024, "inc", slots=128),
                                      after=((f"ar{i - 1}", 0),) if i else ()))
    with inc_fabric(topo) as (fab, control):
        result = VirtualRun(fab, control, VirtualLimits(time_limit_s=0.01)).run(plan, HostConfig(flow_rate_bps=400e9))
        jobs = control.controller.inc.jobs
        assert len(jobs) == 5 and sum(j.slots for j in jobs.values()) <= 256
    assert all(c.inc is not None and c.inc["verified"] for c in result.result.collectives)
