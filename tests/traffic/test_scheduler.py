"""The scheduler seam (traffic/scheduler.py): the same-instant batching operations keep the event order a model
would have had with one event per item, a handle cancels, and the real-time scheduler runs events in time
order, reads readable sockets and stops at its deadline."""

from __future__ import annotations

import socket
import time

import pytest

from traffic.realtime import RealTimeScheduler
from traffic.scheduler import NO_PLACE, PURGE_MIN, EventHeap, SchedulerError
from vfabric.events import Simulator


def test_a_reserved_place_runs_where_its_own_event_would_have() -> None:
    sim = Simulator()
    order: list[str] = []
    sim.at(5, order.append, "a")
    place = sim.next_place()  # the place of an event scheduled now ...
    sim.at(5, order.append, "b")
    sim.push((5, place, order.append, ("c",)))  # ... filled in later
    sim.push((5, sim.next_place(), order.append, ("d",)))
    sim.run()
    assert order == ["a", "c", "b", "d"]


def test_first_place_now_is_the_earliest_event_of_this_instant_still_to_run() -> None:
    sim = Simulator()
    seen: list[int] = []
    first = sim.next_place()
    sim.at(3, lambda: seen.append(sim.first_place_now()))
    later = sim.next_place()
    sim.push((3, later, lambda: None, ()))
    sim.push((3, first, lambda: None, ()))  # runs before the event that asks
    sim.at(4, lambda: seen.append(sim.first_place_now()))  # nothing else left at 4
    sim.run()
    assert seen == [later, NO_PLACE]


def test_a_cancelled_handle_does_nothing_and_bad_times_are_refused() -> None:
    sim = Simulator()
    ran: list[int] = []
    h = sim.call_at(4, ran.append, 1)
    sim.call_at(5, ran.append, 2)
    h.cancel()
    sim.run()
    assert ran == [2]
    heap = EventHeap()
    with pytest.raises(SchedulerError, match="integer"):
        heap.at(1.5, print)  # type: ignore[arg-type]
    with pytest.raises(SchedulerError, match="negative delay"):
        heap.after(-1, print)


def test_cancelled_events_leave_the_heap_and_the_rest_keep_their_order() -> None:
    """Many cancelled timers (finished flows' RTOs) are dropped from the heap once they are half of it; what is
    left runs in the same (time, place) order as without the purge, including an event cancelled after it ran."""
    sim = Simulator()
    ran: list[int] = []
    live = []
    n = 2 * PURGE_MIN
    for k in range(n):
        h = sim.call_at(1000 + (k * 7919) % 97, ran.append, k)
        (live if k % 4 == 0 else []).append(k)
        if k % 4:
            h.cancel()
    sim.at(1, ran.append, -1)
    assert sim.pending() < n // 2 + 2  # purged: the cancelled three quarters are gone
    assert sim.dead < PURGE_MIN
    sim.run()
    assert ran == [-1] + sorted(live, key=lambda k: (1000 + (k * 7919) % 97, k))
    assert sim.dead == 0
    done = sim.call_at(sim.now + 5, ran.append, 99)
    sim.run()
    done.cancel()  # after it ran: counts nothing
    assert ran[-1] == 99 and sim.dead == 0


def test_due_by_names_what_live_events_will_call_up_to_a_time() -> None:
    """A driver asks what is left to happen (vfabric's split: only completion checks?) without the heap."""
    sim = Simulator()

    def early() -> None: ...
    def cancelled() -> None: ...
    def late() -> None: ...

    sim.at(10, early)
    sim.call_at(20, cancelled).cancel()
    sim.at(20, early)
    sim.at(30, late)
    assert sorted(fn.__name__ for fn in sim.due_by(25)) == ["early", "early"]
    assert sorted(fn.__name__ for fn in sim.due_by(30)) == ["early", "early", "late"]
    assert list(sim.due_by(5)) == []


def test_real_time_runs_due_events_in_order_and_reads_sockets() -> None:
    a, b = socket.socketpair()
    a.setblocking(False)
    got: list[object] = []
    try:
        with RealTimeScheduler() as rt:
            def readable(fd: int) -> None:
                got.append(a.recv(100))

            rt.watch(a.fileno(), readable)
            now = time.monotonic_ns()
            rt.at(now + 2_000_000, got.append, "second")
            rt.at(now + 1_000_000, got.append, "first")
            rt.at(now - 5_000_000, got.append, "late")  # the past in real time: run at the next turn
            rt.at(now + 3_000_000, b.send, b"frame")
            timed_out = rt.run(lambda: len(got) < 4, now + 2_000_000_000)
        assert not timed_out
        assert got == ["late", "first", "second", b"frame"]
    finally:
        a.close()
        b.close()


def test_real_time_stops_at_its_deadline() -> None:
    with RealTimeScheduler() as rt:
        t0 = time.monotonic_ns()
        assert rt.run(lambda: True, t0 + 20_000_000) is True
        assert time.monotonic_ns() - t0 >= 20_000_000
