"""When flows and collectives start and settle, and what a flow's record says at the end — clock-free, so the
replay engine (wall clock, sockets) and vfabric's endpoints (virtual time) share one implementation.

A flow starts when every transfer it depends on has settled (arrived, or given up as lossy), `offset` after
that; a collective starts when every collective it comes `after` has finished, `delay` after that (and not
before its own `start`); it finishes when its last flow settles. The caller owns time: it hands in `now`
(integer ns) and says how to run something later (`at_flow(when, fid)`, `at_collective(when, ci)`), which is
a timer heap in the engine and a simulator event in vfabric.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from traffic.records import CollectiveRecord, FlowRecord, PlannedCollective

Schedule = Callable[[int, int], None]  # (when in ns, flow id or collective index)


def ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


class FlowGraph:
    """Dependencies between the flows (one per planned transfer, numbered in plan order) and collectives of a
    plan, and what is still unsettled. `records` are the flows' records in flow-id order."""

    def __init__(self, plan: Sequence[PlannedCollective], colls: list[CollectiveRecord],
                 records: list[FlowRecord], at_flow: Schedule, at_collective: Schedule) -> None:
        self.plan = list(plan)
        self.colls = colls
        self.records = records
        self.at_flow = at_flow
        self.at_collective = at_collective
        self.coll_of: list[int] = []
        self.offset_ns: list[int] = []
        self.deps_left: list[int] = []
        self.dependents: list[list[int]] = []
        for ci, pc in enumerate(self.plan):
            base = len(self.coll_of)
            for t in pc.schedule.transfers:
                self.coll_of.append(ci)
                self.offset_ns.append(ns(t.offset_s))
                self.deps_left.append(len(t.depends_on))
                self.dependents.append([])
            for t in pc.schedule.transfers:
                for d in t.depends_on:
                    self.dependents[base + d].append(base + t.id)
        if len(self.coll_of) != len(records):
            raise ValueError(f"{len(records)} flow records for a plan of {len(self.coll_of)} transfers")
        keys = {pc.key: i for i, pc in enumerate(self.plan)}
        self.coll_left = [len(pc.schedule.transfers) for pc in self.plan]
        self.coll_wait = [sum(1 for a in pc.after if a in keys) for pc in self.plan]
        self.coll_next: dict[int, list[int]] = {}
        for i, pc in enumerate(self.plan):
            for a in pc.after:
                if a in keys:
                    self.coll_next.setdefault(keys[a], []).append(i)
        # collectives the switches carry out (in-network all-reduce, traffic/inc): no flows; the host model's
        # `on_external(ci)` runs them and calls `finish_external(ci, now)`; each counts as one unsettled item
        self.external = {ci for ci, pc in enumerate(self.plan) if pc.schedule.params.get("in_network")}
        self.on_external: Callable[[int], None] | None = None
        self.unsettled = len(records) + len(self.external)
        self.t0 = 0

    def begin(self, t0_ns: int) -> None:
        """Schedule the collectives that wait for nothing, relative to the run's start."""
        self.t0 = t0_ns
        for ci, pc in enumerate(self.plan):
            if self.coll_wait[ci] == 0:
                self.at_collective(t0_ns + ns(pc.start_s + pc.delay_s), ci)

    def start_collective(self, ci: int, now: int) -> None:
        crec = self.colls[ci]
        crec.start_ns = now
        if ci in self.external and self.on_external is not None:
            self.on_external(ci)
            return
        for fid in crec.flows:
            if self.deps_left[fid] == 0:
                self.at_flow(now + self.offset_ns[fid], fid)
        if not crec.flows:
            self._finish_collective(ci, now)

    def _finish_collective(self, ci: int, now: int) -> None:
        self.colls[ci].end_ns = now
        for nxt in self.coll_next.get(ci, ()):
            self.coll_wait[nxt] -= 1
            if self.coll_wait[nxt] == 0:
                pn = self.plan[nxt]
                self.at_collective(max(now + ns(pn.delay_s), self.t0 + ns(pn.start_s)), nxt)

    def finish_external(self, ci: int, now: int) -> None:
        """An external collective (see `external`) is done."""
        self.unsettled -= 1
        self._finish_collective(ci, now)

    def settle(self, fid: int, now: int) -> bool:
        """The flow is done with (delivered, failed or given up): start what waited for it. False if it
        already was."""
        rec = self.records[fid]
        if rec.settle_ns:
            return False
        rec.settle_ns = now
        self.unsettled -= 1
        deps_left = self.deps_left
        for d in self.dependents[fid]:
            deps_left[d] -= 1
            if deps_left[d] == 0:
                self.at_flow(now + self.offset_ns[d], d)
        ci = self.coll_of[fid]
        self.coll_left[ci] -= 1
        if self.coll_left[ci] == 0:
            self._finish_collective(ci, now)
        return True


class FlowState(Protocol):
    """What `finish_records` reads of an engine's per-flow state."""

    rec: FlowRecord
    rx: Any  # traffic.receiver.FlowRx: wire statistics (and delivery under `none`)
    tx: Any  # traffic.transport Sender
    trx: Any  # traffic.transport Receiver
    payload: int  # payload bytes of the flow's last packet
    cc: Any  # traffic.reaction FlowCC, None if the flow never started


def finish_records(flows: Sequence[FlowState], colls: list[CollectiveRecord], reliable: bool, payload: int,
                   end_ns: int) -> None:
    """Copy the end-of-run state of receivers, transports and reactions into the flow records, and end each
    finished collective at its last flow's settle time."""
    for f in flows:
        r, rx = f.rec, f.rx
        r.duplicates, r.reordered = rx.duplicates, rx.reordered
        r.reorder_max, r.ce, r.qdepth_max = rx.reorder_max, rx.ce, rx.qdepth_max
        r.reorder_buffer = rx.reorder_buffer
        if reliable:
            trx, tx = f.trx, f.tx
            r.delivered = trx.delivered
            r.complete = trx.complete
            r.retransmitted, r.timeouts, r.naks, r.failed = tx.retransmitted, tx.timeouts, tx.naks, tx.failed
            r.spurious, r.discarded, r.trimmed = trx.spurious, trx.discarded, trx.trimmed
            tail_got = 1 if trx.complete or (hasattr(trx, "got") and trx.got[-1]) else 0
            if r.complete and not r.settle_ns:
                r.settle_ns = end_ns
        else:
            r.delivered = rx.delivered
            r.complete = rx.complete
            if rx.complete:
                r.settle_ns = rx.complete_ns
            tail_got = rx.seen[-1] if rx.npkts else 0
        r.delivered_bytes = (r.delivered - tail_got) * payload + tail_got * f.payload
        if f.cc is not None:
            r.rate_cuts = f.cc.cuts
    for c in colls:
        ends = [flows[i].rec.settle_ns for i in c.flows]
        if c.end_ns and ends and all(ends):
            c.end_ns = max(ends)
