"""The scheduler seam: what a clock-dependent model may ask of time (ns-3's Simulator, htsim's EventList).

A model (a host NIC, a link, a switch node) is written once against `Scheduler` and runs on either clock:
`vfabric.events.Simulator` (virtual time, deterministic) or `traffic.realtime.RealTimeScheduler` (the
monotonic clock, with socket readiness). Both keep their events in an `EventHeap`: integer nanoseconds and a
sequence number, so two events of one instant run in the order they were scheduled.

Besides `at`/`after`/`call_at`, a model that batches frames of one instant into one event needs three
operations on the order of events, public here so that no model touches the heap: `reserve` sequence
numbers now (the places the frames' own events would have had), `place` an event at a reserved place, and
ask whether an `earlier_pending` event of this instant must run before the next frame of the batch.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappush
from typing import Any, Protocol


class SchedulerError(ValueError):
    """A mistake in how a scheduler was driven (an event in the past, a negative delay, a non-integer time)."""


class Handle:
    """A cancellable event (`Scheduler.call_at`): cancelled, it still leaves the heap at its time, doing nothing."""

    __slots__ = ("fn", "args", "live")

    def __init__(self, fn: Callable[..., Any], args: tuple) -> None:
        self.fn, self.args, self.live = fn, args, True

    def cancel(self) -> None:
        self.live = False

    def fire(self) -> None:
        if self.live:
            self.live = False
            self.fn(*self.args)


class Scheduler(Protocol):
    """Time for a model: read it, schedule at or after it, and keep one instant's batch in event order.
    `now` is `now_ns()` as an attribute (read per frame); `until_ns` the time past which nothing will run
    (a model may commit work up to it ahead of time)."""

    now: int
    until_ns: int

    def now_ns(self) -> int: ...

    def at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> None: ...

    def after(self, delay_ns: int, fn: Callable[..., Any], *args: Any) -> None: ...

    def call_at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> Handle: ...

    def post(self, t_ns: int, fn: Callable[..., Any], args: tuple) -> None: ...

    def reserve(self, n: int = 1) -> int: ...

    def place(self, t_ns: int, seq: int, fn: Callable[..., Any], args: tuple) -> None: ...

    def earlier_pending(self, seq: int) -> bool: ...


class EventHeap:
    """Events as (time ns, sequence, fn, args) on a heap; the clocks differ only in how they run it."""

    def __init__(self) -> None:
        self.now = 0
        self.until_ns = 1 << 62
        self._heap: list[tuple[int, int, Callable[..., Any], tuple]] = []
        self._seq = 0

    def now_ns(self) -> int:
        return self.now

    def at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        if type(t_ns) is not int or t_ns < self.now:
            self._refuse(t_ns, fn)
        self._seq += 1
        heappush(self._heap, (t_ns, self._seq, fn, args))

    def _refuse(self, t_ns: Any, fn: Callable[..., Any]) -> None:
        if type(t_ns) is not int:
            raise SchedulerError(f"event time must be an integer number of ns, got {t_ns!r}")
        raise SchedulerError(f"event at {t_ns} ns is in the past (now {self.now} ns): "
                             f"{getattr(fn, '__name__', fn)}")

    def after(self, delay_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        if delay_ns < 0:
            raise SchedulerError(f"negative delay {delay_ns} ns for {getattr(fn, '__name__', fn)}")
        self.at(self.now + delay_ns, fn, *args)

    def call_at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> Handle:
        """`at`, returning a handle whose `cancel()` makes the event do nothing."""
        h = Handle(fn, args)
        self.at(t_ns, h.fire)
        return h

    def post(self, t_ns: int, fn: Callable[..., Any], args: tuple) -> None:
        """`at` without its checks, for a time the caller knows is an integer not before now (a hot path:
        a frame's arrival, a port's next turn)."""
        self._seq += 1
        heappush(self._heap, (t_ns, self._seq, fn, args))

    def reserve(self, n: int = 1) -> int:
        """Take `n` sequence numbers now (the places `n` events scheduled now would have); returns the last."""
        self._seq += n
        return self._seq

    def place(self, t_ns: int, seq: int, fn: Callable[..., Any], args: tuple) -> None:
        """An event at the place `seq` reserved (unchecked: `t_ns` not before now, `seq` from `reserve`)."""
        heappush(self._heap, (t_ns, seq, fn, args))

    def earlier_pending(self, seq: int) -> bool:
        """Whether an event of the current instant scheduled before place `seq` is still to run."""
        heap = self._heap
        if heap:
            top = heap[0]
            return top[0] == self.now and top[1] < seq
        return False

    def pending(self) -> int:
        return len(self._heap)

    def next_time(self) -> int | None:
        return self._heap[0][0] if self._heap else None
