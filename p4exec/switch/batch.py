"""Same-instant frames through a pipeline with a batch entry (the native one) in a few calls into C, with exactly
the effects of `SwitchLoop.ingress` on each frame in turn.

C runs ingress and, for a unicast copy whose egress port would let it leave at once (`TrafficManager.pass_through`:
up, nothing queued, not paced past this nanosecond), egress too, frame after frame. A copy for a port that
cannot take it now (queued, paced out, down: its egress runs later in any case) is left for the traffic
manager. Where Python must act at once (multicast, clones, a port not judged yet, the CPU port) C stops and that
frame takes the Python path; then C goes on. The gate per port: 1 an idle unpaced port, 2 an idle paced port, once
its next departure is due (open for one frame, then 3), 3 the copy waits for the traffic manager, 0 ask Python.
Python then does each frame's bookkeeping in order: the traffic manager (`pass_through` returns what C assumed,
or `_admit`), the side's hooks and the wire.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from p4exec.switch.stats import MALFORMED, PIPELINE
from p4exec.switch.tm import TrafficManager


class SwitchLoop(Protocol):
    """What a batch needs of `p4exec.switch.loop.SwitchLoop` (the loop calls in here, never the other way)."""

    tm: TrafficManager
    cpu_port: int | None
    up_state: Any
    executions: int
    min_frame: int
    wire_overhead: int
    _halves: tuple[Callable[..., Any], Callable[..., Any], Callable[[], bool]] | None
    _serving: set[int]
    _touched: set[int]

    def _lost(self, ctx: Any, reason: str) -> None: ...
    def _copies(self, ps: Any, copies: int) -> Any: ...
    def _dropped(self, fate: Any, reason: str) -> None: ...
    def _copy_done(self, fate: Any, fwd: int, cpu: int) -> None: ...
    def _admit(self, jobs: list[Any], ctx: Any, egress: Callable[..., Any], now: int, now_us: int,
               port: int) -> None: ...
    def _admit_copy(self, job: Any, eport: int, priority: int, length: int, egress: Callable[..., Any], fate: Any,
                    now: int, now_us: int, port: int) -> bool: ...
    def _egress(self, job: Any, egress: Callable[..., Any], fate: Any, qinfo: Any, start: float,
                now_us: int) -> None: ...
    def _send_out(self, frames: list[tuple[int, bytes]], fate: Any, start: float) -> None: ...
    def _forward_one(self, ctx: Any, port: int, frame: bytes, start: float, /) -> None: ...

GATE_PORTS = 512


class Gates:
    """One switch's gate array for one pipeline: the cells C reads, and which ports have one (`open`).

    A cell stays right until its port changes: the switch loop notes every port it changes (`_touched`:
    queued, served, kicked, flushed, held by its link layer, carrier changed) and the traffic manager counts
    configuration changes (`generation`); a batch judges these ports alone, not every port it ever judged (on a
    128-port UPN switch that cost ~128 judgements per batch, and per stop within one). Time passing changes no
    cell: an idle paced port's cell (2) comes with its next departure (`free_at`, clock ns), which C compares
    with the batch's instant itself (judging the paced-out ports again as they came due cost more than the
    frames' bookkeeping on a busy switch, where most ports are paced out at any instant). Within a batch, all
    at one instant, a port changes only by what is done to it there (C's own pass-through of a copy, which C
    accounts itself, or Python finishing a copy for it): after each stop only the ports Python touched are
    judged again; a paced port C let a copy through is open again once Python has accounted it (`passed`)."""

    def __init__(self, pipe: Any, loop: SwitchLoop) -> None:
        self.pipe = pipe
        self.cells = pipe.ffi.new("uint8_t[]", GATE_PORTS)
        self.free_at = pipe.ffi.new("double[]", GATE_PORTS)
        self.open: set[int] = set()
        self.generation = loop.tm.generation

    def fresh(self, loop: SwitchLoop) -> bool:
        """The cells are right as they are: no port touched and no configuration change since they were judged
        (most lone frames find them so, and skip `start`)."""
        return not loop._touched and self.generation == loop.tm.generation

    def start(self, loop: SwitchLoop) -> None:
        """Bring the cells up to date at the start of a batch."""
        tm = loop.tm
        touched = loop._touched
        if self.generation != tm.generation:  # a port's configuration changed: judge every port again
            self.generation = tm.generation
            touched.update(self.open)
        if touched:
            self.refresh(loop, touched)
            touched.clear()

    def passed(self, pq: Any) -> None:
        """C let a copy through `pq`'s port and the traffic manager has accounted it (`pass_through`): an
        unpaced port stays open (1); a paced one (C closed it, 3) is open again from its next departure."""
        if pq.paced:
            port = pq.port
            self.free_at[port] = pq.next_tx
            self.cells[port] = 2

    def refresh(self, loop: SwitchLoop, ports: Iterable[int]) -> None:
        """Judge `ports`: 1 a copy for the port passes the traffic manager at once, and so would the next; 2 only
        one, once the port is free (an idle paced port, `free_at`); 3 it waits in (or is dropped by) the traffic
        manager; none (cell 0) the Python path decides."""
        cells, open_, free_at = self.cells, self.open, self.free_at
        cpu, serving, up, tm_ports = loop.cpu_port, loop._serving, loop.up_state, loop.tm.ports
        for port in ports:
            if not 0 <= port < GATE_PORTS or port == cpu:
                continue
            if port in serving or not up.get(port):
                g = 3
            else:
                pq = tm_ports.get(port)
                if pq is None:
                    continue
                if pq.backlog:
                    g = 3
                elif not pq.paced:
                    g = 1
                else:
                    g = 2
                    free_at[port] = pq.next_tx
            cells[port] = g
            open_.add(port)


def gates_for(loop: SwitchLoop, pipe: Any) -> Gates:
    """The loop's gate array for `pipe`, brought up to date for a batch."""
    gates: Gates | None = getattr(loop, "_gates", None)
    if gates is None or gates.pipe is not pipe:
        gates = loop._gates = Gates(pipe, loop)  # type: ignore[attr-defined]
    elif gates.fresh(loop):
        return gates
    gates.start(loop)
    return gates


def run_one(loop: SwitchLoop, pipe: Any, port: int, frame: bytes, ctx: Any) -> None:
    """`SwitchLoop.ingress` of one frame through the pipeline's batch entry, a batch of one: ingress, the traffic
    manager's shortcut (the port's gate) and egress in one call into C when the copy may leave at once."""
    tm = loop.tm
    now = tm.clock.now_ns()
    now_us = (now - tm.start_ns) // 1000
    loop.executions += 1
    gates: Gates | None = getattr(loop, "_gates", None)
    if gates is None or gates.pipe is not pipe or not gates.fresh(loop):  # (most lone frames find them fresh)
        gates = gates_for(loop, pipe)
    r, word = pipe.batch_one(port, frame, now_us, gates.cells, now, gates.free_at)
    if r >= 0:  # forwarded at once (the common case): what run_batch does with such a frame
        eport = word & 0x1FF
        n = len(frame)
        pq = tm.pass_judged(eport, (n if n > loop.min_frame else loop.min_frame) + loop.wire_overhead, now)
        gates.passed(pq)
        loop._forward_one(ctx, eport, pipe.one_bytes(r), pq.departed_ns)
        return
    halves = loop._halves
    assert halves is not None
    touched = loop._touched  # (the ports it changes go straight into the loop's set: no set per frame)
    if r in _STOPS:
        _stopped(loop, pipe, 0, r, word, len(frame), port, ctx, now, now_us, halves[1], touched)
    else:
        _done(loop, pipe, 0, r, word, len(frame), port, ctx, now, now_us, halves[1], touched)


_STOPS = frozenset((-3, -4, -6, -10))  # p4n_switch_batch's codes of a frame it stopped at


def _done(loop: SwitchLoop, pipe: Any, i: int, r: int, word: int, length: int, in_port: int, ctx: Any, now: int,
          now_us: int, egress: Callable[..., Any], touched: set[int], out: bytes | None = None) -> None:
    """Frame i's bookkeeping after C went past it (r: its result, word: its tm word; `out`: its output frame when
    forwarded, r >= 0): drops, the traffic manager and the wire, as `SwitchLoop.ingress` has them."""
    stats = pipe.stats
    if r in (-1, -7, -2):
        if r == -2:
            malformed = pipe.batch_fault(i, "ingress")  # a fault after a parser error: malformed
        else:
            stats["dropped"] += 1
            malformed = r == -7
        loop._lost(ctx, MALFORMED if malformed else PIPELINE)
        return
    eport, prio = word & 0x1FF, word >> 16
    touched.add(eport)
    if r == -9:  # the copy waits in the traffic manager; C parked it, the queue holds its slot
        slot = pipe.parked_slot(i)
        if slot < 0:  # C had no memory to park it: a Python job instead
            loop._admit(pipe.batch_jobs(i, r, now_us), ctx, egress, now, now_us, in_port)
        elif not loop._admit_copy(slot, eport, prio, length, pipe.egress_parked, loop._copies(ctx, 1), now, now_us,
                                  in_port):
            pipe.release_parked(slot)
        return
    min_frame = loop.min_frame
    tm = loop.tm
    tm.pass_through(eport, prio, (length if length > min_frame else min_frame) + loop.wire_overhead, now)
    if r >= 0:
        assert out is not None
        loop._forward_one(ctx, eport, out, tm.ports[eport].departed_ns)
        return
    fate = loop._copies(ctx, 1)
    if r == -5:
        pipe.batch_fault(i, "egress")
    else:
        stats["dropped"] += 1
    loop._dropped(fate, PIPELINE)
    loop._copy_done(fate, 0, 0)


def _stopped(loop: SwitchLoop, pipe: Any, i: int, code: int, word: int, length: int, in_port: int, ctx: Any,
             now: int, now_us: int, egress: Callable[..., Any], touched: set[int]) -> None:
    """Frame i, at which C stopped (`code`), finished in Python; the ports it changed go into `touched`."""
    tm = loop.tm
    if code == -6:     # egress ran in C and asked for an E2E clone or recirculation
        eport, prio = word & 0x1FF, word >> 16
        fate = loop._copies(ctx, 1)
        min_frame = loop.min_frame
        qinfo = tm.pass_through(eport, prio, (length if length > min_frame else min_frame) + loop.wire_overhead,
                                now)
        tail = pipe.batch_tail(i, now_us)
        loop._egress(None, lambda _j, _n, _q, out=tail: out, fate, qinfo, tm.ports[eport].departed_ns, now_us)
        touched.add(eport)
        touched.update(port for port, _frame in tail)
        return
    jobs = pipe.batch_jobs(i, code, now_us)
    if not jobs:
        loop._lost(ctx, MALFORMED if pipe.last_malformed else PIPELINE)
    else:
        loop._admit(jobs, ctx, egress, now, now_us, in_port)
    touched.update(j.egress_port for j in jobs)


def run_batch(loop: SwitchLoop, pipe: Any, items: list[tuple[int, bytes, Any]]) -> None:
    halves = loop._halves
    assert halves is not None
    _ingress, egress, _malformed = halves
    tm = loop.tm
    now = tm.clock.now_ns()
    now_us = (now - tm.start_ns) // 1000
    loop.executions += len(items)
    gates = gates_for(loop, pipe)
    cells, free_at, passed = gates.cells, gates.free_at, gates.passed
    pass_judged = tm.pass_judged
    pipe.batch_load([it[0] for it in items], [it[1] for it in items])
    min_frame, overhead = loop.min_frame, loop.wire_overhead
    forward_one = loop._forward_one
    n = len(items)
    start = 0
    while True:
        stop, code, results = pipe.batch_run(start, now_us, cells, now, free_at)
        i = start
        touched: set[int] = set()  # ports whose state Python changes below: judged again before C goes on
        for r, word, off in results:
            if r >= 0:  # forwarded at once (the common case), inline
                eport = word & 0x1FF
                length = len(items[i][1])
                pq = pass_judged(eport, (length if length > min_frame else min_frame) + overhead, now)
                passed(pq)
                forward_one(items[i][2], eport, pipe.batch_bytes(off, r), pq.departed_ns)
            else:
                item = items[i]
                _done(loop, pipe, i, r, word, len(item[1]), item[0], item[2], now, now_us, egress, touched)
            i += 1
        if stop >= n:
            loop._touched.update(touched)  # what C and Python did to these ports: judged at the next batch
            return
        item = items[stop]
        _stopped(loop, pipe, stop, code, pipe._tm[stop], len(item[1]), item[0], item[2], now, now_us, egress,
                 touched)
        gates.refresh(loop, touched)
        start = stop + 1
