"""The v1model traffic manager: per egress port FIFO queues between ingress and egress.

It behaves like BMv2's simple_switch egress buffers: a packet is timestamped and its
queue depth recorded when it enters (`enq_timestamp`, `enq_qdepth` = packets already
waiting), and on leaving the time spent and the depth left behind are recorded
(`deq_timedelta`, `deq_qdepth`), all in microseconds since the traffic manager started.
A full queue drops the arriving packet (tail drop). Each port is served at its own rate
(packets/s and/or bits/s; 0 means as fast as the switch can go). With several
priority queues per port, standard_metadata.priority picks the queue and the highest
non-empty queue is always served first (strict priority).

Time comes from a `Clock`: the emulated switch passes the monotonic clock, the
virtual-time fabric (vfabric) its event clock, so both run this one implementation.

Link-level flow control (linklayer/, PFC or CBFC) adds two things, both absent (None) otherwise, so the
path of a packet is then exactly what it was: per ingress port a receive buffer (`buffers`) that accounts
every queued copy by the port it came in on and its priority, admitted on enqueue and released when it
leaves (the bytes PFC pauses on and CBFC returns as credits); a lossless priority then never tail-drops at
the egress queue's depth — the ingress buffer decides. And per egress port a transmit gate
(`PortQueue.gate`) that holds a priority the peer paused or has no credits for: strict priority then serves
the highest queue whose head the gate lets go.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from math import floor
from typing import Any, Protocol

DEFAULT_DEPTH = 64  # packets, BMv2's default queue capacity


class Clock(Protocol):
    """Where the traffic manager reads the time: integer nanoseconds, never decreasing."""

    def now_ns(self) -> int: ...


class MonotonicClock:
    """Wall-clock time for the emulated switch: `time.monotonic_ns()` (so deadlines compare with
    `time.monotonic()` after dividing by 1e9)."""

    def now_ns(self) -> int:
        return time.monotonic_ns()


class ManualClock:
    """A clock that moves only when told to (tests, and anything that keeps its own time)."""

    def __init__(self, t_ns: int = 0) -> None:
        self.t_ns = t_ns

    def now_ns(self) -> int:
        return self.t_ns

    def set(self, t_ns: int) -> None:
        if t_ns < self.t_ns:
            raise ValueError(f"clock cannot go back from {self.t_ns} ns to {t_ns} ns")
        self.t_ns = t_ns


@dataclass
class QueueConfig:
    """Depth in packets and service rate of one egress port (0 = unlimited)."""

    depth: int = DEFAULT_DEPTH
    rate_pps: float = 0.0
    rate_bps: float = 0.0

    def as_dict(self) -> dict:
        return {"depth": self.depth, "rate_pps": self.rate_pps, "rate_bps": self.rate_bps}


class QueueInfo:
    """Queueing metadata handed to `pipeline.egress` (v1model standard_metadata names)."""

    __slots__ = ("enq_timestamp", "enq_qdepth", "deq_timedelta", "deq_qdepth", "qid")

    def __init__(self, enq_timestamp: int, enq_qdepth: int, deq_timedelta: int, deq_qdepth: int, qid: int):
        self.enq_timestamp = enq_timestamp
        self.enq_qdepth = enq_qdepth
        self.deq_timedelta = deq_timedelta
        self.deq_qdepth = deq_qdepth
        self.qid = qid

    def __repr__(self) -> str:
        return (
            f"QueueInfo(enq_timestamp={self.enq_timestamp}, enq_qdepth={self.enq_qdepth}, "
            f"deq_timedelta={self.deq_timedelta}, deq_qdepth={self.deq_qdepth}, qid={self.qid})"
        )


class PortQueue:
    """The queues of one egress port and its pacing state."""

    __slots__ = ("port", "queues", "config", "next_tx", "backlog", "drops", "paced", "max_depth", "departed_ns",
                 "passed", "bps", "min_gap_ns", "gate", "held", "top")

    def __init__(self, port: int, nqueues: int, config: QueueConfig) -> None:
        self.port = port
        self.queues: list[deque] = [deque() for _ in range(nqueues)]
        self.config = config
        self.next_tx = 0.0  # clock ns (fractional: serialisation times are not whole ns) of the next departure
        self.backlog = 0
        self.drops = 0
        self.max_depth = 0  # most packets ever waiting at once (all priorities)
        self.departed_ns = 0.0  # when the last dequeued packet started to leave (fractional clock ns)
        self.passed: QueueInfo | None = None  # the metadata `pass_through` gave last (shared while it is the same)
        self.gate: Any = None  # link-level flow control's transmit gate (linklayer.flow.TxGate), or None
        self.held = False  # the gate held every waiting priority (the port saved no credit meanwhile)
        # no queue above this one holds a packet: strict priority's scan starts here, not at the highest of 8
        self.top = 0
        self.retime()

    def retime(self) -> None:
        """Copy the pacing limits out of `config` (after every change to it), so that a packet's departure
        reads two numbers instead of a config object and its two rates."""
        cfg = self.config
        self.paced = cfg.rate_pps > 0 or cfg.rate_bps > 0
        self.bps = cfg.rate_bps if cfg.rate_bps > 0 else 0.0
        self.min_gap_ns = 1e9 / cfg.rate_pps if cfg.rate_pps > 0 else 0.0

    def interval_ns(self, length: int) -> float:
        """How long a `length`-byte packet holds the port: the larger of the pps and bps limits."""
        gap = length * 8e9 / self.bps if self.bps else 0.0
        return gap if gap > self.min_gap_ns else self.min_gap_ns


class _OpenGate:
    """The transmit gate of a port without flow control of its own (the CPU port) on a switch with it."""

    def may_send(self, prio: int, nbytes: int) -> bool:
        return True

    def sent(self, prio: int, nbytes: int) -> None:
        pass


OPEN_GATE = _OpenGate()


class TrafficManager:
    """Egress queues of all ports. One call per job: `pass_through` (the shortcut for an idle port),
    `enqueue`, then `dequeue` while it gives packets and `ready_ns` for when to come back."""

    def __init__(self, default: QueueConfig | None = None, nqueues: int = 1, clock: Clock | None = None) -> None:
        self.default = default or QueueConfig()
        self.nqueues = max(1, nqueues)
        self.clock: Clock = clock if clock is not None else MonotonicClock()
        self.start_ns = self.clock.now_ns()
        self.ports: dict[int, PortQueue] = {}
        self.active: set[int] = set()  # ports with a backlog
        # link-level flow control: ingress port -> receive buffer (linklayer.flow.RxBuffer); None: off
        self.buffers: dict[int, Any] | None = None
        self.lossless: tuple[bool, ...] = ()  # per queue: the ingress buffer, not the queue depth, may refuse
        # moves on every change of a port's configuration (depth, rates, flow control): whoever caches what a
        # port would do with a packet (p4exec/switch/batch.py's gates) judges every port again then
        self.generation = 0

    def now_us(self) -> int:
        """Microseconds since this traffic manager started: the v1model timestamps' unit and origin."""
        return (self.clock.now_ns() - self.start_ns) // 1000

    def port(self, port: int) -> PortQueue:
        pq = self.ports.get(port)
        if pq is None:
            cfg = QueueConfig(self.default.depth, self.default.rate_pps, self.default.rate_bps)
            pq = self.ports[port] = PortQueue(port, self.nqueues, cfg)
            if self.buffers is not None:
                pq.gate = OPEN_GATE  # the port's copies still release their ingress buffers
        return pq

    def configure(
        self, port: int, *, depth: int | None = None, rate_pps: float | None = None, rate_bps: float | None = None
    ) -> QueueConfig:
        cfg = self.port(port).config
        if depth is not None:
            if depth < 1:
                raise ValueError("queue depth must be at least 1 packet")
            cfg.depth = int(depth)
        if rate_pps is not None:
            if rate_pps < 0:
                raise ValueError("queue rate must not be negative")
            cfg.rate_pps = float(rate_pps)
        if rate_bps is not None:
            if rate_bps < 0:
                raise ValueError("queue rate must not be negative")
            cfg.rate_bps = float(rate_bps)
        self.ports[port].retime()
        self.generation += 1
        return cfg

    def enqueue(self, port: int, priority: int, item: object, length: int, in_port: int = -1,
                now: int | None = None) -> bool:
        """Queue `item` for `port` now (it came in on `in_port`); False (tail drop) when that queue is full, or
        when flow control's ingress buffer of `in_port` refuses it. `now`: the clock's reading, where the caller
        has it at hand (one reading per packet, not one per call)."""
        if now is None:
            now = self.clock.now_ns()
        pq = self.ports.get(port) or self.port(port)
        qid = priority if 0 <= priority < self.nqueues else (self.nqueues - 1 if priority > 0 else 0)
        q = pq.queues[qid]
        depth = len(q)
        buffers = self.buffers
        if buffers is None:
            if depth >= pq.config.depth:
                pq.drops += 1
                return False
        elif not self._admit(buffers, pq, qid, depth, length, in_port):
            return False
        if pq.backlog == 0:
            if pq.next_tx < now:
                pq.next_tx = now  # an idle port saves no credit
            self.active.add(port)
        q.append((item, length, now, depth, qid, in_port))
        if qid > pq.top:
            pq.top = qid
        pq.backlog += 1
        if pq.backlog > pq.max_depth:
            pq.max_depth = pq.backlog
        return True

    def pass_through(self, port: int, priority: int, length: int, now: int | None = None) -> QueueInfo | None:
        """A packet for `port` that finds its queues empty and the port free within this nanosecond leaves
        at once: exactly what `enqueue` followed by `dequeue` would do (same metadata, pacing and
        `departed_ns`), without queueing it. None: it must be enqueued. The QueueInfo may be the one an earlier
        packet got in the same microsecond (read it, never change it). `now`: the clock's reading, where the
        caller has it at hand."""
        pq = self.ports.get(port) or self.port(port)
        if pq.backlog or self.buffers is not None:  # flow control accounts every copy in the buffer
            return None
        if now is None:
            now = self.clock.now_ns()
        if pq.paced and pq.next_tx >= now + 1:
            return None
        _depart(pq, now, length)
        qid = priority if 0 <= priority < self.nqueues else (self.nqueues - 1 if priority > 0 else 0)
        now_us = (now - self.start_ns) // 1000
        qi = pq.passed
        # packets that pass through in the same µs on the same queue have the same metadata: one object
        if qi is None or qi.enq_timestamp != now_us or qi.qid != qid:
            qi = pq.passed = QueueInfo(now_us, 0, 0, 0, qid)
        return qi

    def pass_judged(self, port: int, length: int, now: int) -> PortQueue:
        """`pass_through` of a packet already judged to pass (the batch path's gate: the port idle and free within
        this nanosecond, no flow control), without its queueing metadata (the caller gave egress an empty
        queue's): the same pacing, `departed_ns` and `max_depth`. The port's queues."""
        pq = self.ports[port]
        _depart(pq, now, length)
        return pq

    def ready_ns(self, port: int, now: int | None = None) -> int | None:
        """The clock ns at which the head of `port`'s queues may leave (None: nothing waits).

        A packet may leave in the nanosecond its (fractional) departure time falls in: `dequeue` at the
        returned time always succeeds (no event loop can spin on float noise), and `departed_ns` then says
        exactly when within that nanosecond it started. `now`: the clock's reading, where the caller has it."""
        pq = self.ports.get(port)
        if pq is None or not pq.backlog:
            return None
        if pq.gate is not None and self._eligible(pq) is None:
            pq.held = True
            return None  # every waiting priority is held: the gate wakes the port when one may go
        if now is None:
            now = self.clock.now_ns()
        if pq.paced:
            nxt = floor(pq.next_tx)  # (non-negative: int()'s truncation, without its argument parsing)
            return nxt if nxt > now else now
        return now

    def dequeue(self, port: int, now: int | None = None) -> tuple[object, QueueInfo] | None:
        """The next packet of `port` if it may leave now (strict priority), with its queueing metadata. `now`: the
        clock's reading, where the caller has it at hand."""
        pq = self.ports.get(port)
        if pq is None or not pq.backlog:
            return None
        if now is None:
            now = self.clock.now_ns()
        if pq.paced and pq.next_tx >= now + 1:
            return None
        if pq.gate is not None:  # flow control (every port has a gate then)
            return self._pop_flow(port, pq, now)
        out = self._pop(pq, now)
        if pq.backlog == 0:
            self.active.discard(port)
        return out

    def _pop(self, pq: PortQueue, now: int, head: deque | None = None) -> tuple[object, QueueInfo]:
        """Take the head of the highest non-empty queue (or of `head`, flow control's choice)."""
        if head is None:
            queues = pq.queues
            for qid in range(pq.top, -1, -1):
                if queues[qid]:
                    q = queues[qid]
                    pq.top = qid  # (every queue above it is empty)
                    break
        else:
            q = head
        item, length, enq_ns, enq_depth, qid, _in_port = q.popleft()
        pq.backlog -= 1
        if pq.paced:
            start = pq.next_tx
            pq.departed_ns = start if start > now else now
            # pq.interval_ns(length), inline (once per queued packet)
            gap = length * 8e9 / pq.bps if pq.bps else 0.0
            pq.next_tx = start + (gap if gap > pq.min_gap_ns else pq.min_gap_ns)
        else:
            pq.departed_ns = now
        start = self.start_ns
        enq_us = (enq_ns - start) // 1000
        return item, QueueInfo(enq_us, enq_depth, (now - start) // 1000 - enq_us, len(q), qid)

    def flush_port(self, port: int) -> list:
        """Remove everything queued for `port` (its link went down): the items, to be counted."""
        pq = self.ports.get(port)
        if pq is None:
            return []
        items = [entry[0] for q in pq.queues for entry in q]
        buffers = self.buffers
        if buffers is not None:
            for q in pq.queues:
                for entry in q:
                    rx = buffers.get(entry[5])
                    if rx is not None:
                        rx.release(entry[4], entry[1])
        for q in pq.queues:
            q.clear()
        pq.backlog = 0
        pq.top = 0
        self.active.discard(port)
        return items

    def backlog(self) -> int:
        return sum(pq.backlog for pq in self.ports.values())

    # ------------------------------------------------------------------ link-level flow control

    def use_buffers(self, lossless: tuple[bool, ...]) -> None:
        """Flow control on: account every copy by ingress port (`buffers[in_port]`, filled per port by the
        caller) and serve every port through a gate (an open one until the caller gives the port its own)."""
        self.buffers = {}
        self.lossless = lossless
        self.generation += 1
        for pq in self.ports.values():
            if pq.gate is None:
                pq.gate = OPEN_GATE

    def _admit(self, buffers: dict[int, Any], pq: PortQueue, qid: int, depth: int, length: int,
               in_port: int) -> bool:
        """Flow control on: the ingress buffer of `in_port` decides for a lossless priority, the queue depth for
        the others (after the buffer has accounted them too)."""
        lossless = self.lossless
        if depth >= pq.config.depth and not (qid < len(lossless) and lossless[qid]):
            pq.drops += 1
            return False
        rx = buffers.get(in_port)
        if rx is not None and not rx.admit(qid, length):
            pq.drops += 1
            return False
        return True

    def _eligible(self, pq: PortQueue) -> deque | None:
        """The highest non-empty queue whose head the port's gate lets go now (None: all are held)."""
        queues, gate = pq.queues, pq.gate
        for qid in range(len(queues) - 1, -1, -1):
            q = queues[qid]
            if q and (gate is None or gate.may_send(qid, q[0][1])):
                return q
        return None

    def _pop_flow(self, port: int, pq: PortQueue, now: int) -> tuple[object, QueueInfo] | None:
        """`dequeue` with flow control: skip held priorities, tell the gate what left and the ingress buffer what
        it no longer holds."""
        q = self._eligible(pq)
        if q is None:
            pq.held = True
            return None
        if pq.held:  # a held port, like an idle one, saves no credit: no burst above its rate when let go
            pq.held = False
            if pq.next_tx < now:
                pq.next_tx = now
        _item, length, _enq, _depth, qid, in_port = q[0]
        out = self._pop(pq, now, q)
        if pq.backlog == 0:
            self.active.discard(port)
        pq.gate.sent(qid, length)
        buffers = self.buffers
        if buffers is not None:
            rx = buffers.get(in_port)
            if rx is not None:
                rx.release(qid, length)
        return out


def _depart(pq: PortQueue, now: int, length: int) -> None:
    """A packet leaves the idle port `pq` at `now` or, paced, at its next slot (which the caller checked falls
    within this nanosecond): its departure, the pacing credit it uses, and the depth it saw (one)."""
    if pq.paced:
        start = pq.next_tx
        if start < now:
            start = now  # an idle port saves no credit
        pq.departed_ns = start
        gap = length * 8e9 / pq.bps if pq.bps else 0.0  # pq.interval_ns(length), inline (once per packet)
        pq.next_tx = start + (gap if gap > pq.min_gap_ns else pq.min_gap_ns)
    else:
        pq.departed_ns = now
    if not pq.max_depth:
        pq.max_depth = 1
