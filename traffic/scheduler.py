"""The scheduler seam: what a clock-dependent model may ask of time (ns-3's Simulator, htsim's EventList).

A model (a host NIC, a link, a switch node) is written once against `Scheduler` and runs on either clock:
`vfabric.events.Simulator` (virtual time, deterministic) or `traffic.realtime.RealTimeScheduler` (the
monotonic clock, with socket readiness). Both keep their events in an `EventHeap`: integer nanoseconds and a
sequence number, so two events of one instant run in the order they were scheduled.

Besides `at`/`after`/`call_at`, a model that batches frames of one instant into one event needs three
operations on the order of events, public here so that no model touches the heap: reserve places now
(`next_place`: the places the frames' own events would have had), `push` an event at a reserved place,
and ask which place the first event of this instant still to run has (`first_place_now`): the batch lets it
run before any of its frames that reserved a later place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from heapq import heapify, heappush
from itertools import count
from typing import Any, Protocol

NO_PLACE = 1 << 62  # later than any place an event can have
# The scheduler's own places start here; below it, models with a fixed source id number their own events
# (vfabric/links.py: a link direction's arrivals, (source << 40) + sequence), which therefore run first
# within an instant, and in an order no partitioning of the fabric changes.
SCHEDULER_PLACES = 1 << 60
# Cancelled events are taken out of the heap once they are at least this many and half of it: a heap inflated
# by dead timers (every finished flow's retransmission timer) makes every pop dearer (deeper, colder).
PURGE_MIN = 1024


class SchedulerError(ValueError):
    """A mistake in how a scheduler was driven (an event in the past, a negative delay, a non-integer time)."""


class Handle:
    """A cancellable event (`Scheduler.call_at`): cancelled, it does nothing when its time comes, and its heap
    entry is dropped when enough of them have piled up (`EventHeap`)."""

    __slots__ = ("fn", "args", "live", "owner")

    def __init__(self, fn: Callable[..., Any], args: tuple, owner: EventHeap | None = None) -> None:
        self.fn, self.args, self.live, self.owner = fn, args, True, owner

    def cancel(self) -> None:
        if self.live:
            self.live = False
            if self.owner is not None:
                self.owner.cancelled()

    def fire(self) -> None:
        if self.live:
            self.live = False
            self.fn(*self.args)
        elif self.owner is not None:
            self.owner.dead -= 1  # a cancelled entry left the heap by its time


def _live(entry: tuple[int, int, Callable[..., Any], tuple]) -> bool:
    h = getattr(entry[2], "__self__", None)
    return type(h) is not Handle or h.live


class Scheduler(Protocol):
    """Time for a model: read it, schedule at or after it, and keep one instant's batch in event order.
    `now` is `now_ns()` as an attribute (read per frame); `until_ns` the time past which nothing will run
    (a model may commit work up to it ahead of time).

    The batching operations are plain callables, looked up once and called per frame without a Python frame
    of their own: `next_place()` reserves the next place in the event order (the one an event scheduled now
    would take), `push((t_ns, place, fn, args))` puts an event at a place reserved before, unchecked (the
    caller knows `t_ns` is an integer not before now)."""

    now: int
    until_ns: int
    next_place: Callable[[], int]
    push: Callable[[tuple[int, int, Callable[..., Any], tuple]], None]

    def now_ns(self) -> int: ...

    def at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> None: ...

    def after(self, delay_ns: int, fn: Callable[..., Any], *args: Any) -> None: ...

    def call_at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> Handle: ...

    def first_place_now(self) -> int: ...


class EventHeap:
    """Events as (time ns, place, fn, args) on a heap; the clocks differ only in how they run it."""

    def __init__(self) -> None:
        self.now = 0
        self.until_ns = 1 << 62
        self._heap: list[tuple[int, int, Callable[..., Any], tuple]] = []
        self.next_place: Callable[[], int] = count(SCHEDULER_PLACES).__next__
        self.push: Callable[[tuple[int, int, Callable[..., Any], tuple]], None] = partial(heappush, self._heap)
        self.dead = 0  # cancelled events still in the heap

    def now_ns(self) -> int:
        return self.now

    def at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        if type(t_ns) is not int or t_ns < self.now:
            self._refuse(t_ns, fn)
        heappush(self._heap, (t_ns, self.next_place(), fn, args))

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
        h = Handle(fn, args, self)
        self.at(t_ns, h.fire)
        return h

    def cancelled(self) -> None:
        """One more event in the heap was cancelled (`Handle.cancel`): when they are many, take them out.
        Pops run in (time, place) order, which no heap layout changes, so this changes no event's turn; the
        heap list stays the same object (a running loop holds it)."""
        self.dead += 1
        heap = self._heap
        if self.dead >= PURGE_MIN and 2 * self.dead >= len(heap):
            heap[:] = [e for e in heap if _live(e)]
            heapify(heap)
            self.dead = 0

    def due_by(self, t_ns: int) -> Iterator[Callable[..., Any]]:
        """What the live events due at or before `t_ns` will call, in no particular order (a cancelled event is
        not due): lets a driver ask what is left to happen without reading the heap."""
        for entry in self._heap:
            if entry[0] <= t_ns and _live(entry):
                yield entry[2]

    def first_place_now(self) -> int:
        """The place of the first event of the current instant still to run (`NO_PLACE` if none): a batch
        of this instant whose next item reserved a later place must let that event run first. (Only an
        event pushed at a reserved place can come before it, so it holds while the batch runs.)"""
        heap = self._heap
        if heap:
            top = heap[0]
            if top[0] == self.now:
                return top[1]
        return NO_PLACE

    def pending(self) -> int:
        return len(self._heap)

    def next_time(self) -> int | None:
        return self._heap[0][0] if self._heap else None
