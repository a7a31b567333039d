"""The cyclic garbage collector paused while a phase makes or frees many long-lived objects in one go.

A big table write allocates a dozen objects per entry, nearly all of them kept (the entries) or freed by
reference counting; the collector would still scan them again and again while the batch grows (measured: half
the CPU of a 1000-entry Write into a 64k table). Loading a virtual run's plan, bringing its control plane up and
running its event loop are the same kind of phase at a larger scale (UPN 512: millions of objects). Pausing the
collector for the phase and letting it run afterwards loses nothing: cyclic garbage made meanwhile is collected
then. One implementation for the P4Runtime server's threads and the simulator, so that their pauses nest across
threads: the collector comes back only when the last pause ends.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def paused() -> Iterator[bool]:
    """Nestable and thread-safe: the collector runs again when the last pause ends, if it ran before the first.
    Yields whether it ran before the first (a long phase may then collect at times of its own choosing)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
        was_on = _resume
    try:
        yield was_on
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()


def _after_fork_in_child() -> None:
    """A forked partition worker has only the thread that forked; another thread may have held the lock at the
    fork. A fresh lock; the count stays, so a pause another thread held keeps the collector off in the child (it
    is off there anyway, as it was in the parent at the fork)."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
