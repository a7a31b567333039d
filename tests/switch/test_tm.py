"""The traffic manager on its own: BMv2's queueing metadata, tail drop, strict priority, pacing."""

from __future__ import annotations

from p4exec.switch.tm import QueueConfig, TrafficManager


def test_fifo_metadata_and_tail_drop() -> None:
    tm = TrafficManager(QueueConfig(depth=3))
    accepted = [tm.enqueue(2, 0, f"p{i}", 100, 0.0, 10 + i) for i in range(5)]
    assert accepted == [True, True, True, False, False]
    assert tm.ports[2].drops == 2
    out, wake = tm.service(0.001, 50)
    assert [item for _, item, _ in out] == ["p0", "p1", "p2"]
    assert wake is None and not tm.active
    infos = [q for _, _, q in out]
    assert [q.enq_qdepth for q in infos] == [0, 1, 2]  # packets already waiting on arrival
    assert [q.deq_qdepth for q in infos] == [2, 1, 0]  # packets left behind
    assert [q.enq_timestamp for q in infos] == [10, 11, 12]
    assert [q.deq_timedelta for q in infos] == [40, 39, 38]


def test_strict_priority_serves_highest_first() -> None:
    tm = TrafficManager(QueueConfig(depth=8), nqueues=4)
    for i, prio in enumerate([0, 3, 1, 3, 7]):  # 7 is beyond the 4 queues: goes to the highest
        assert tm.enqueue(1, prio, (prio, i), 64, 0.0, 0)
    out, _ = tm.service(0.0, 0)
    assert [item for _, item, _ in out] == [(3, 1), (3, 3), (7, 4), (1, 2), (0, 0)]
    assert [q.qid for _, _, q in out] == [3, 3, 3, 1, 0]


def test_pacing_packets_per_second() -> None:
    tm = TrafficManager(QueueConfig(depth=100, rate_pps=1000))
    for i in range(10):
        tm.enqueue(1, 0, i, 64, 0.0, 0)
    out, wake = tm.service(0.0, 0)
    assert len(out) == 1 and abs(wake - 0.001) < 1e-9
    out, wake = tm.service(0.0055, 5500)  # a late wake-up sends what was due, no more
    assert [item for _, item, _ in out] == [1, 2, 3, 4, 5]
    assert abs(wake - 0.006) < 1e-9
    tm.configure(1, rate_pps=0)  # unlimited at run time: the rest leaves at once
    out, wake = tm.service(0.0056, 5600)
    assert len(out) == 4 and wake is None


def test_pacing_bits_per_second() -> None:
    tm = TrafficManager(QueueConfig(depth=100, rate_bps=8_000_000))  # 1 MB/s: a 1000-byte frame = 1 ms
    for i in range(3):
        tm.enqueue(1, 0, i, 1000, 0.0, 0)
    out, wake = tm.service(0.0, 0)
    assert len(out) == 1 and abs(wake - 0.001) < 1e-9


def test_idle_port_does_not_save_credit() -> None:
    tm = TrafficManager(QueueConfig(depth=100, rate_pps=100))
    tm.enqueue(1, 0, "a", 64, 0.0, 0)
    tm.service(0.0, 0)
    for i in range(5):
        tm.enqueue(1, 0, i, 64, 10.0, 10_000_000)  # long idle, then a burst
    out, _ = tm.service(10.0, 10_000_000)
    assert len(out) == 1
