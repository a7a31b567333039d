"""The event core: integer nanoseconds, a heap of (time, sequence) so equal times run in scheduling order.

Deterministic by construction: nothing reads the wall clock, and two events at the same instant run in the
order they were scheduled. Mistakes that would make a simulation hang or run backwards (an event in the
past, a negative delay, a non-integer time) are errors with the offending values in the message.
"""

from __future__ import annotations

import gc
import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from p4exec.runtime import gcpause
from traffic.scheduler import EventHeap, SchedulerError

GC_EVERY_S = 30.0  # wall-clock seconds between the event loop's own full garbage collections


SimError = SchedulerError  # a mistake in how the simulation was driven (bad time, delay or rate)


@dataclass
class RunStats:
    """Why and where `Simulator.run` stopped."""

    reason: str  # "idle" (nothing left), "until" (virtual-time limit), "wall" (wall-clock limit), "stopped"
    now_ns: int
    events: int
    wall_s: float
    cpu_s: float = 0.0  # CPU time of the calling thread spent in `run` (the event loop alone, no set-up)
    processes: int = 1  # partition workers that shared the run (vfabric/partition.py); cpu_s is their sum


class Simulator(EventHeap):
    """`at(t, fn, *args)` / `after(dt, fn, *args)` schedule; `run()` executes in time order.

    The virtual-time `Scheduler` (traffic/scheduler.py): its heap and its batching operations are
    `EventHeap`'s, its clock moves only from event to event. It is also the `Clock` the traffic managers read
    (`now_ns`)."""

    def __init__(self) -> None:
        super().__init__()
        self.events = 0
        self._stop_reason: str | None = None
        self.until_ns = 1 << 62  # the virtual-time limit of the current `run` (events may look ahead to it)

    def stop(self, reason: str = "stopped") -> None:
        """End `run` after the current event (from inside an event, or a signal handler)."""
        self._stop_reason = reason

    def run(self, until_ns: int | None = None, wall_limit_s: float | None = None,
            progress: Callable[[Simulator], None] | None = None, progress_every: int = 20000,
            horizon_ns: int | None = None) -> RunStats:
        """Run events until none is left, virtual time would pass `until_ns`, `wall_limit_s` of wall clock
        has gone, or `stop()` was called. Events exactly at `until_ns` still run. `horizon_ns` (default
        `until_ns`): what models read as `until_ns`, the time past which nothing will run at all — a window of
        a longer run (vfabric/window.py) stops at `until_ns` but must let them commit work as the whole run
        would."""
        if until_ns is not None and until_ns < self.now:
            raise SimError(f"run until {until_ns} ns is in the past (now {self.now} ns)")
        heap = self._heap
        pop = heapq.heappop
        start = time.perf_counter()
        cpu0 = time.thread_time()
        wall_end = None if wall_limit_s is None else start + wall_limit_s
        limit = self.until_ns = until_ns if until_ns is not None else 1 << 62
        if horizon_ns is not None:
            self.until_ns = horizon_ns
        self._stop_reason = None
        chunk = range(progress_every)
        # The cyclic garbage collector is paused while events run: the event loop makes no reference cycles, but
        # with millions of long-lived objects (a UPN 512 fabric's flows, tables and frames) its automatic passes
        # took ~15 % of the loop. A full collection every GC_EVERY_S of wall clock still frees any cycle.
        with gcpause.paused() as collect:
            reason = self._loop(heap, pop, chunk, progress_every, limit, wall_end, progress, collect,
                                start + GC_EVERY_S)
        return RunStats(reason, self.now, self.events, time.perf_counter() - start, time.thread_time() - cpu0)

    def _loop(self, heap: list, pop: Callable[[list], Any], chunk: range, progress_every: int, limit: int,
              wall_end: float | None, progress: Callable[[Simulator], None] | None, collect: bool,
              next_gc: float) -> str:
        n = 0
        reason = "idle"
        while heap:
            # a chunk of events with nothing but the heap in the loop; limits are looked at between chunks
            done = 0
            for done in chunk:
                try:
                    t, _seq, fn, args = pop(heap)
                except IndexError:  # nothing left (an empty heap costs nothing to test for this way)
                    break
                if t > limit:
                    heapq.heappush(heap, (t, _seq, fn, args))
                    reason = "until"
                    self.now = limit
                    break
                self.now = t
                fn(*args)
                if self._stop_reason is not None:
                    reason = self._stop_reason
                    done += 1
                    break
            else:
                n += progress_every
                if progress is not None:
                    self.events += n
                    n = 0
                    progress(self)
                now_wall = time.perf_counter()
                if wall_end is not None and now_wall >= wall_end:
                    reason = "wall"
                    break
                if collect and now_wall >= next_gc:
                    gc.collect()
                    next_gc = time.perf_counter() + GC_EVERY_S
                continue
            n += done
            break
        self.events += n
        return reason
