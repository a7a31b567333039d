"""The traffic manager on its own: BMv2's queueing metadata, tail drop, strict priority, pacing, on a
clock the test moves (the same code runs on the monotonic clock in the switch and on vfabric's clock)."""

from __future__ import annotations

import pytest

from p4exec.switch.tm import ManualClock, MonotonicClock, QueueConfig, TrafficManager

MS = 1_000_000  # ns


def serve(tm: TrafficManager) -> tuple[list, int | None]:
    """What a switch loop does at a wake-up: dequeue every port while it gives packets, then ask when to
    come back: ([(port, item, QueueInfo)], earliest ready ns or None)."""
    out: list = []
    wake: int | None = None
    for port in sorted(tm.active):
        while (got := tm.dequeue(port)) is not None:
            out.append((port, *got))
        ready = tm.ready_ns(port)
        if ready is not None and (wake is None or ready < wake):
            wake = ready
    return out, wake


def test_fifo_metadata_and_tail_drop() -> None:
    clock = ManualClock()
    tm = TrafficManager(QueueConfig(depth=3), clock=clock)
    accepted = []
    for i in range(5):
        clock.set((10 + i) * 1000)
        accepted.append(tm.enqueue(2, 0, f"p{i}", 100))
    assert accepted == [True, True, True, False, False]
    assert tm.ports[2].drops == 2
    clock.set(50_000)
    out, wake = serve(tm)
    assert [item for _, item, _ in out] == ["p0", "p1", "p2"]
    assert wake is None and not tm.active
    infos = [q for _, _, q in out]
    assert [q.enq_qdepth for q in infos] == [0, 1, 2]  # packets already waiting on arrival
    assert [q.deq_qdepth for q in infos] == [2, 1, 0]  # packets left behind
    assert [q.enq_timestamp for q in infos] == [10, 11, 12]
    assert [q.deq_timedelta for q in infos] == [40, 39, 38]
    assert tm.ports[2].max_depth == 3


def test_strict_priority_serves_highest_first() -> None:
    tm = TrafficManager(QueueConfig(depth=8), nqueues=4, clock=ManualClock())
    for i, prio in enumerate([0, 3, 1, 3, 7]):  # 7 is beyond the 4 queues: goes to the highest
        assert tm.enqueue(1, prio, (prio, i), 64)
    out, _ = serve(tm)
    assert [item for _, item, _ in out] == [(3, 1), (3, 3), (7, 4), (1, 2), (0, 0)]
    assert [q.qid for _, _, q in out] == [3, 3, 3, 1, 0]


def test_pacing_packets_per_second() -> None:
    clock = ManualClock()
    tm = TrafficManager(QueueConfig(depth=100, rate_pps=1000), clock=clock)
    for i in range(10):
        tm.enqueue(1, 0, i, 64)
    out, wake = serve(tm)
    assert len(out) == 1 and wake == 1 * MS
    clock.set(5_500_000)  # a late wake-up sends what was due, no more
    out, wake = serve(tm)
    assert [item for _, item, _ in out] == [1, 2, 3, 4, 5]
    assert wake == 6 * MS
    tm.configure(1, rate_pps=0)  # unlimited at run time: the rest leaves at once
    clock.set(5_600_000)
    out, wake = serve(tm)
    assert len(out) == 4 and wake is None


def test_pacing_bits_per_second_keeps_fractional_ns() -> None:
    # 400 Gbit/s: a 1064-byte frame holds the port 21.28 ns; 1000 of them take 21.28 us, not 21 or 22 us.
    clock = ManualClock()
    tm = TrafficManager(QueueConfig(depth=2000, rate_bps=400e9), clock=clock)
    for i in range(1000):
        tm.enqueue(1, 0, i, 1064)
    sent = 0
    while True:
        item = tm.dequeue(1)
        if item is not None:
            sent += 1
            continue
        ready = tm.ready_ns(1)
        if ready is None:
            break
        assert ready > clock.now_ns()  # never "now" while dequeue refuses: no spinning
        clock.set(ready)
    assert sent == 1000
    assert tm.ports[1].next_tx == pytest.approx(21_280, abs=1e-6)


def test_idle_port_does_not_save_credit() -> None:
    clock = ManualClock()
    tm = TrafficManager(QueueConfig(depth=100, rate_pps=100), clock=clock)
    tm.enqueue(1, 0, "a", 64)
    serve(tm)
    clock.set(10_000 * MS)
    for i in range(5):
        tm.enqueue(1, 0, i, 64)  # long idle, then a burst
    out, _ = serve(tm)
    assert len(out) == 1


def test_clock_cannot_go_back_and_monotonic_is_default() -> None:
    clock = ManualClock(5)
    with pytest.raises(ValueError, match="cannot go back"):
        clock.set(4)
    tm = TrafficManager()
    assert isinstance(tm.clock, MonotonicClock) and tm.now_us() >= 0


def test_pass_through_equals_enqueue_then_dequeue() -> None:
    # vfabric's shortcut for a packet that finds its port idle must leave the same metadata and pacing state
    def fields(qi):
        return (qi.enq_timestamp, qi.enq_qdepth, qi.deq_timedelta, qi.deq_qdepth, qi.qid)

    clocks = ManualClock(1_000_000), ManualClock(1_000_000)
    a = TrafficManager(QueueConfig(depth=8, rate_bps=400e9), nqueues=2, clock=clocks[0])
    b = TrafficManager(QueueConfig(depth=8, rate_bps=400e9), nqueues=2, clock=clocks[1])
    for t in (1_000_000, 1_000_100, 1_000_130, 1_000_131):
        for c in clocks:
            c.set(t)
        assert a.enqueue(3, 1, "x", 1524)
        got = a.dequeue(3)
        qi = b.pass_through(3, 1, 1524)
        if got is None:  # the port is still busy: pass_through must refuse too
            assert qi is None
            a.flush_port(3)
            continue
        assert qi is not None and fields(got[1]) == fields(qi)
        assert a.ports[3].next_tx == b.ports[3].next_tx and a.ports[3].departed_ns == b.ports[3].departed_ns
    assert b.ports[3].max_depth == 1 and b.backlog() == 0
