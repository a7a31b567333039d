"""The endpoint side of in-network all-reduce: per rank and plane a state machine that streams chunks into
the switch with a window of slots, retransmits what gets no result in time, and checks every result against
the sum computed from the seed.

Clock-agnostic: time comes from a `Clock` (now, call at) and frames leave through a `send(eid, plane, frame)`
function, so the emulated engine (wall clock, sockets) and vfabric (virtual time) drive the same code. A host
model hooks it in three places: build `IncEndpoints` from the plan, hand it every INC frame that arrives
(`on_frame`), and start a collective when the plan says (`start`); `IncEndpoints.jobs()` are the aggregation
jobs the controller must set up first (controller/inc.py).

Slot discipline (SwitchML's): chunk k of a plane's stream goes to slot k % slots, copy (k // slots) % 2, and
is sent only once chunk k - slots has its result, so a copy is reused only after every member finished with
it. Chunk numbers keep counting across the iterations of a collective, so the copies keep alternating.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from traffic.inc import wire
from traffic.inc.data import Vectors


class Clock(Protocol):
    def now_ns(self) -> int: ...

    def call_at(self, at_ns: int, fn: Callable[[], None]) -> None: ...


class CallbackClock:
    """A Clock from two functions (a simulator's `now`/`at`, or a wall-clock timer heap)."""

    def __init__(self, now: Callable[[], int], at: Callable[[int, Callable[[], None]], Any]) -> None:
        self._now, self._at = now, at

    def now_ns(self) -> int:
        return self._now()

    def call_at(self, at_ns: int, fn: Callable[[], None]) -> None:
        self._at(at_ns, fn)


Send = Callable[[int, int, bytes], None]  # (endpoint id, plane, frame)
JOB_BASE = 1  # job ids: JOB_BASE + collective number * MAX_PLANES + plane
MAX_PLANES = 8


@dataclass(frozen=True)
class IncParams:
    """What the `inc` algorithm's schedule carries (traffic/collectives/inc.py)."""

    planes: int = 1
    slots: int = 64
    timeout_ns: int = 200_000
    seed: int = 1
    max_abs: int | None = None

    @classmethod
    def of(cls, params: dict) -> IncParams:
        return cls(int(params.get("planes", 1)), int(params.get("slots", 64)),
                   int(round(float(params.get("timeout_us", 200.0)) * 1000)), int(params.get("seed", 1)),
                   params.get("max_abs"))


@dataclass(frozen=True)
class JobSpec:
    job_id: int
    members: tuple[int, ...]
    plane: int
    slots: int


class RankStream:
    """One rank's chunks on one plane: window, timeouts, verification."""

    def __init__(self, coll: IncCollective, rank_index: int, eid: int, plane: int, job: int,
                 chunks: Sequence[int]) -> None:
        self.coll, self.ri, self.eid, self.plane, self.job = coll, rank_index, eid, plane, job
        self.chunks = list(chunks)
        self.seq0 = 0  # running chunk number of this iteration's first chunk
        self.done = bytearray(len(self.chunks))
        self.next = 0
        self.inflight: dict[int, int] = {}  # k -> deadline
        self.timers: deque[tuple[int, int]] = deque()  # (deadline, k) in send order
        self.timer_at = 0
        self.finished = 0
        self.src_mac = b"\x02\xe1\x00" + bytes([plane]) + eid.to_bytes(2, "big")

    def begin(self, seq0: int) -> None:
        self.seq0 = seq0
        self.done = bytearray(len(self.chunks))
        self.next = 0
        self.finished = 0
        self.inflight.clear()
        self.timers.clear()
        self.pump()

    def _frame(self, k: int) -> bytes:
        slots = self.coll.window
        n = self.seq0 + k
        hdr = wire.IncHeader(self.job, n % slots, (n // slots) & 1, 0, 0, 1, n & 0xFFFFFFFF, 0)
        data = self.coll.vectors.chunk(self.ri, self.chunks[k])
        return wire.pack(b"\xff" * 6, self.src_mac, self.plane, self.eid, hdr, data, seq=n)

    def _send(self, k: int) -> None:
        clock = self.coll.clock
        deadline = clock.now_ns() + self.coll.params.timeout_ns
        self.inflight[k] = deadline
        self.timers.append((deadline, k))
        self.coll.frames += 1
        self.coll.send(self.eid, self.plane, self._frame(k))
        if not self.timer_at:
            self.timer_at = deadline
            clock.call_at(deadline, self._on_timer)

    def pump(self) -> None:
        slots = self.coll.window
        while self.next < len(self.chunks) and (self.next < slots or self.done[self.next - slots]):
            self._send(self.next)
            self.next += 1

    def on_result(self, hdr: wire.IncHeader, data: np.ndarray) -> None:
        k = hdr.chunk - (self.seq0 & 0xFFFFFFFF)
        if not 0 <= k < len(self.chunks) or self.done[k]:
            self.coll.duplicate_results += 1
            return
        c = self.chunks[k]
        ok = hdr.ranks == self.coll.vectors.n and np.array_equal(data, self.coll.vectors.expected(c))
        if not ok:
            self.coll.wrong_sums += 1
        self.coll.verified_results += ok
        self.done[k] = 1
        self.finished += 1
        del self.inflight[k]
        self.coll.chunk_verified(c)
        self.pump()
        if self.finished == len(self.chunks):
            self.coll.stream_done()

    def _on_timer(self) -> None:
        self.timer_at = 0
        now = self.coll.clock.now_ns()
        timers = self.timers
        while timers and (timers[0][1] not in self.inflight or self.inflight[timers[0][1]] != timers[0][0]):
            timers.popleft()  # answered, or superseded by a later retransmission
        while timers and timers[0][0] <= now:
            _deadline, k = timers.popleft()
            if self.inflight.get(k) != _deadline:
                continue
            self.coll.retransmissions += 1
            self._send(k)
        while timers and (timers[0][1] not in self.inflight or self.inflight[timers[0][1]] != timers[0][0]):
            timers.popleft()
        if timers and not self.timer_at:
            self.timer_at = timers[0][0]
            self.coll.clock.call_at(self.timer_at, self._on_timer)


class IncCollective:
    """One planned INC all-reduce: every rank's streams, the seeded vectors, the counts for metrics.json."""

    def __init__(self, index: int, ranks: Sequence[int], size: int, params: IncParams, planes: Sequence[int],
                 clock: Clock, send: Send, on_done: Callable[[], None]) -> None:
        self.index, self.params, self.clock, self.send, self.on_done = index, params, clock, send, on_done
        self.ranks = tuple(ranks)
        n_elems = max(1, -(-size // 4))
        self.vectors = Vectors(self.ranks, n_elems, params.seed, params.max_abs)
        if params.planes > MAX_PLANES:
            raise ValueError(f"inc: at most {MAX_PLANES} planes (got {params.planes})")
        self.planes = [planes[i % len(planes)] for i in range(params.planes)]
        self.jobs = [JOB_BASE + index * MAX_PLANES + i for i in range(params.planes)]
        per_plane = [list(range(i, self.vectors.chunks, params.planes)) for i in range(params.planes)]
        self.per_plane_chunks = [len(c) for c in per_plane]
        # slots per switch = chunks in flight per rank and plane: the job's slot count, which the frames'
        # slot numbers must stay below (IncEndpoints may shrink it so that every job fits the pools)
        self.window = max(1, min(params.slots, max(self.per_plane_chunks)))
        self.streams = [RankStream(self, ri, eid, self.planes[i], self.jobs[i], per_plane[i])
                        for ri, eid in enumerate(self.ranks) for i in range(params.planes) if per_plane[i]]
        self.by_key = {(s.job, s.eid): s for s in self.streams}
        self.iteration = 0
        self.running = 0
        self.frames = self.retransmissions = self.wrong_sums = self.verified_results = self.duplicate_results = 0
        self._verified_by: dict[int, int] = {}
        self._base = (0, 0, 0, 0, 0)  # the counters when the current iteration started

    def job_specs(self) -> list[JobSpec]:
        return [JobSpec(job, self.ranks, plane, self.window) for job, plane in zip(self.jobs, self.planes,
                                                                                     strict=True)]

    def start(self) -> None:
        streams = self.streams
        self.running = len(streams)
        it = self.iteration
        self.iteration += 1
        self._base = self._counts()
        for s in streams:
            s.begin(it * self.per_plane_chunks[self.jobs.index(s.job)])

    def chunk_verified(self, chunk: int) -> None:
        """Drop the cached expected sum once every rank has checked it."""
        got = self._verified_by.get(chunk, 0) + 1
        if got >= len(self.ranks):
            self._verified_by.pop(chunk, None)
            self.vectors.forget(chunk)
        else:
            self._verified_by[chunk] = got

    def stream_done(self) -> None:
        self.running -= 1
        if self.running == 0:
            self.on_done()

    def _counts(self) -> tuple[int, int, int, int, int]:
        return (self.frames, self.retransmissions, self.wrong_sums, self.verified_results, self.duplicate_results)

    def stats(self) -> dict[str, Any]:
        """The `inc` block of metrics.json for the current iteration: verified only if every rank checked
        every chunk's sum and none was wrong."""
        frames, retx, wrong, checked, dups = (a - b for a, b in zip(self._counts(), self._base, strict=True))
        chunks = self.vectors.chunks
        return {"verified": wrong == 0 and checked == chunks * len(self.ranks), "chunks": chunks,
                "results_checked": checked, "wrong_sums": wrong, "retransmissions": retx,
                "duplicate_results": dups, "slots_used": sum(j.slots for j in self.job_specs()),
                "frames_sent": frames, "wire_bytes_per_rank": frames * wire.FRAME_BYTES // max(1, len(self.ranks)),
                "elements_per_frame": wire.ELEMS, "planes": len(self.planes)}


def _nothing() -> None:
    pass


class IncEndpoints:
    """Every INC collective of a plan, for one host model. `start(ci)` begins collective `ci` of the plan,
    `finish(ci)` (the host model's) is called when all its ranks have verified every chunk."""

    def __init__(self, plan: Sequence[Any], topo_planes: Sequence[int], clock: Clock, send: Send,
                 finish: Callable[[int], None]) -> None:
        self.collectives: dict[int, IncCollective] = {}
        self.by_job: dict[int, IncCollective] = {}
        by_name: dict[str, IncCollective] = {}
        for ci, pc in enumerate(plan):
            s = pc.schedule
            if s.algorithm != "inc":
                continue
            coll = by_name.get(pc.name)
            if coll is None:
                coll = by_name[pc.name] = IncCollective(len(by_name), s.ranks, s.size, IncParams.of(s.params),
                                                        topo_planes, clock, send, _nothing)
                for job in coll.jobs:
                    self.by_job[job] = coll
            self.collectives[ci] = coll
        self._finish = finish
        self.foreign = 0
        # every job is set up before the run: if a plane's jobs want more slots than a switch has, each gets a
        # share (at least one slot; the controller still refuses what does not fit)
        demand: dict[int, int] = {}
        for coll in by_name.values():
            for plane in set(coll.planes):
                demand[plane] = demand.get(plane, 0) + coll.window
        worst = max(demand.values(), default=0)
        if worst > wire.SLOTS:
            for coll in by_name.values():
                coll.window = max(1, coll.window * wire.SLOTS // worst)

    def __bool__(self) -> bool:
        return bool(self.collectives)

    def jobs(self) -> list[JobSpec]:
        seen: dict[int, JobSpec] = {}
        for coll in self.collectives.values():
            for spec in coll.job_specs():
                seen[spec.job_id] = spec
        return [seen[j] for j in sorted(seen)]

    def start(self, ci: int) -> None:
        coll = self.collectives[ci]
        coll.on_done = lambda: self._finish(ci)
        coll.start()

    def on_frame(self, eid: int, frame: bytes) -> bool:
        """An INC frame reached endpoint `eid`: True if it was one (consumed)."""
        parsed = wire.parse(frame)
        if parsed is None:
            return False
        hdr, data = parsed
        coll = self.by_job.get(hdr.job)
        stream = coll.by_key.get((hdr.job, eid)) if coll is not None else None
        if stream is None or not hdr.is_result:
            self.foreign += 1
            return True
        stream.on_result(hdr, data)
        return True

    def stats(self, ci: int) -> dict[str, Any]:
        return self.collectives[ci].stats()
