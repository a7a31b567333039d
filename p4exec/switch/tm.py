"""The v1model traffic manager: per egress port FIFO queues between ingress and egress.

It behaves like BMv2's simple_switch egress buffers: a packet is timestamped and its
queue depth recorded when it enters (`enq_timestamp`, `enq_qdepth` = packets already
waiting), and on leaving the time spent and the depth left behind are recorded
(`deq_timedelta`, `deq_qdepth`), all in microseconds since the switch started. A full
queue drops the arriving packet (tail drop). Each port is served at its own rate
(packets/s and/or bits/s; 0 means as fast as the switch can go). With several
priority queues per port, standard_metadata.priority picks the queue and the highest
non-empty queue is always served first (strict priority).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

DEFAULT_DEPTH = 64  # packets, BMv2's default queue capacity


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

    __slots__ = ("port", "queues", "config", "next_tx", "backlog", "drops", "paced")

    def __init__(self, port: int, nqueues: int, config: QueueConfig) -> None:
        self.port = port
        self.queues: list[deque] = [deque() for _ in range(nqueues)]
        self.config = config
        self.next_tx = 0.0  # seconds (monotonic) when the next packet may leave
        self.backlog = 0
        self.drops = 0
        self.paced = config.rate_pps > 0 or config.rate_bps > 0

    def interval(self, length: int) -> float:
        cfg = self.config
        gap = 0.0
        if cfg.rate_pps > 0:
            gap = 1.0 / cfg.rate_pps
        if cfg.rate_bps > 0:
            gap = max(gap, length * 8.0 / cfg.rate_bps)
        return gap


class TrafficManager:
    """Egress queues of all ports; the switch loop enqueues after ingress and calls `service`."""

    def __init__(self, default: QueueConfig | None = None, nqueues: int = 1) -> None:
        self.default = default or QueueConfig()
        self.nqueues = max(1, nqueues)
        self.ports: dict[int, PortQueue] = {}
        self.active: set[int] = set()  # ports with a backlog

    def port(self, port: int) -> PortQueue:
        pq = self.ports.get(port)
        if pq is None:
            cfg = QueueConfig(self.default.depth, self.default.rate_pps, self.default.rate_bps)
            pq = self.ports[port] = PortQueue(port, self.nqueues, cfg)
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
        pq = self.ports[port]
        pq.paced = cfg.rate_pps > 0 or cfg.rate_bps > 0
        return cfg

    def bypass(self, port: int) -> bool:
        """True when a packet for `port` would leave at once (unpaced, nothing waiting): skip the queue."""
        pq = self.ports.get(port) or self.port(port)
        return pq.backlog == 0 and not pq.paced

    def enqueue(self, port: int, priority: int, item: object, length: int, now: float, now_us: int) -> bool:
        """Queue `item` for `port`; False (tail drop) when that queue is full."""
        pq = self.ports.get(port) or self.port(port)
        qid = priority if 0 <= priority < self.nqueues else (self.nqueues - 1 if priority > 0 else 0)
        q = pq.queues[qid]
        depth = len(q)
        if depth >= pq.config.depth:
            pq.drops += 1
            return False
        if pq.backlog == 0:
            if pq.next_tx < now:
                pq.next_tx = now
            self.active.add(port)
        q.append((item, length, now_us, depth, qid))
        pq.backlog += 1
        return True

    def service(self, now: float, now_us: int, budget: int = 256) -> tuple[list, float | None]:
        """Dequeue what may leave by `now`: ([(port, item, QueueInfo)], next deadline or None)."""
        out: list = []
        wake: float | None = None
        done = []
        for port in self.active:
            pq = self.ports[port]
            cfg = pq.config
            paced = cfg.rate_pps > 0 or cfg.rate_bps > 0
            queues = pq.queues
            n = 0
            while pq.backlog and n < budget:
                if paced and pq.next_tx > now:
                    break
                for qid in range(len(queues) - 1, -1, -1):
                    if queues[qid]:
                        q = queues[qid]
                        break
                item, length, enq_us, enq_depth, qid = q.popleft()
                pq.backlog -= 1
                n += 1
                if paced:
                    pq.next_tx += pq.interval(length)
                out.append((port, item, QueueInfo(enq_us, enq_depth, now_us - enq_us, len(q), qid)))
            if pq.backlog == 0:
                done.append(port)
            elif paced and pq.next_tx > now:
                if wake is None or pq.next_tx < wake:
                    wake = pq.next_tx
            else:
                wake = now  # budget used up: come back at once
        for port in done:
            self.active.discard(port)
        return out, wake

    def flush_port(self, port: int) -> list:
        """Remove everything queued for `port` (its link went down): the items, to be counted."""
        pq = self.ports.get(port)
        if pq is None:
            return []
        items = [entry[0] for q in pq.queues for entry in q]
        for q in pq.queues:
            q.clear()
        pq.backlog = 0
        self.active.discard(port)
        return items

    def backlog(self) -> int:
        return sum(pq.backlog for pq in self.ports.values())
