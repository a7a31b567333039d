"""The clock-free start/settle model both clocks share (traffic/progress.py), driven by a scripted clock: a
ring all-reduce's steps start only when the transfers they depend on have settled, and a collective `after`
another starts `delay` after it finished."""

from __future__ import annotations

import heapq

import pytest

from traffic.collectives import make_schedule
from traffic.progress import FlowGraph
from traffic.records import CollectiveRecord, FlowRecord, PlannedCollective


def _graph(plan: list[PlannedCollective]):
    colls, records = [], []
    for pc in plan:
        s = pc.schedule
        crec = CollectiveRecord(pc.name, pc.iteration, s.kind, s.algorithm, s.size, s.ranks)
        for t in s.transfers:
            crec.flows.append(len(records))
            records.append(FlowRecord(len(records), pc.key, t.id, t.src, t.dst, t.plane, t.bytes, 1))
        colls.append(crec)
    events: list[tuple[int, int, str, int]] = []
    seq = [0]

    def push(kind: str):
        def at(when: int, ident: int) -> None:
            seq[0] += 1
            heapq.heappush(events, (when, seq[0], kind, ident))
        return at

    return FlowGraph(plan, colls, records, push("flow"), push("coll")), events, colls, records


def test_dependencies_and_collective_order() -> None:
    ar = make_schedule("all_reduce", [0, 1, 2, 3], 64_000, "ring")
    plan = [PlannedCollective("ar", 0, ar), PlannedCollective("ar", 1, ar, after=(("ar", 0),), delay_s=1e-6)]
    graph, events, colls, records = _graph(plan)
    graph.begin(1_000)
    started: dict[int, int] = {}
    while events:
        now, _, kind, ident = heapq.heappop(events)
        if kind == "coll":
            graph.start_collective(ident, now)
            continue
        ci = next(i for i, c in enumerate(colls) if ident in c.flows)
        base = colls[ci].flows[0]
        for d in plan[ci].schedule.transfers[ident - base].depends_on:  # only after what it depends on settled
            assert records[base + d].settle_ns and records[base + d].settle_ns <= now
        started[ident] = now
        assert graph.settle(ident, now + 10)  # every transfer takes 10 ns here
        assert not graph.settle(ident, now + 20)  # settling twice changes nothing
    assert graph.unsettled == 0 and len(started) == len(records)
    assert colls[0].start_ns == 1_000 and colls[0].end_ns > colls[0].start_ns
    assert colls[1].start_ns == colls[0].end_ns + 1_000  # `after` + delay_s
    steps = 2 * (4 - 1)
    assert colls[0].end_ns - colls[0].start_ns == steps * 10  # one step after the other


def test_records_must_match_the_plan() -> None:
    ar = make_schedule("all_reduce", [0, 1], 1_000, "ring")
    with pytest.raises(ValueError, match="flow records for a plan"):
        FlowGraph([PlannedCollective("ar", 0, ar)], [], [], lambda _w, _i: None, lambda _w, _i: None)
