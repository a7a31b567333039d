"""The real-time `Scheduler`: the monotonic clock, events on an `EventHeap`, and readable sockets.

One loop turn reads the clock once (`now` for the whole turn, as a NIC's timestamp would be), first hands
every readable socket to its reader (receiving is dearer than sending: socket buffers must not overflow
because the loop was busy sending), then runs the events that are due — at most `batch` of them before the
sockets are read again — and sleeps in epoll until the next event is due (at most `max_sleep_s`, so a
stop condition is seen soon). An event scheduled for a time already past runs at the next turn: in real
time "late" is not a mistake, only a delay.
"""

from __future__ import annotations

import heapq
import select
import time
from collections.abc import Callable
from typing import Any

from traffic.scheduler import EventHeap


class RealTimeScheduler(EventHeap):
    """Events at monotonic-clock nanoseconds, and file descriptors watched for readability."""

    def __init__(self, batch: int = 32, max_sleep_s: float = 0.005) -> None:
        super().__init__()
        self.now = time.monotonic_ns()
        self.batch = batch
        self.max_sleep_s = max_sleep_s
        self._poller = select.epoll()  # reports only the ready sockets: cheap with hundreds of ports
        self._readers: dict[int, Callable[[int], None]] = {}

    def at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        super().at(t_ns if t_ns > self.now else self.now, fn, *args)

    def watch(self, fd: int, on_readable: Callable[[int], None]) -> None:
        """Call `on_readable(fd)` whenever `fd` has something to read (level-triggered: it should drain)."""
        if fd not in self._readers:
            self._poller.register(fd, select.EPOLLIN)
        self._readers[fd] = on_readable

    def close(self) -> None:
        self._poller.close()
        self._readers.clear()

    def __enter__(self) -> RealTimeScheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, busy: Callable[[], bool], deadline_ns: int) -> bool:
        """Run turns while `busy()` and the clock is before `deadline_ns`; True if the deadline ended it."""
        heap, readers = self._heap, self._readers
        poll = self._poller.poll
        pop = heapq.heappop
        clock = time.monotonic_ns
        batch = self.batch
        while busy():
            now = self.now = clock()
            if now >= deadline_ns:
                return True
            for fd, _ev in poll(0):
                readers[fd](fd)
            n = 0
            while heap and heap[0][0] <= now and n < batch:
                _t, _seq, fn, args = pop(heap)
                fn(*args)
                n += 1
            nxt = heap[0][0] if heap else deadline_ns
            wait_s = (min(nxt, deadline_ns) - clock()) / 1e9
            if wait_s >= 0.001:
                poll(min(wait_s, self.max_sleep_s))
        return False
