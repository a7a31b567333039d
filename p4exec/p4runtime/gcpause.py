"""The cyclic garbage collector paused while a batch of writes is applied.

A big table write allocates a dozen objects per entry, nearly all of them kept (the entries) or freed
by reference counting; the collector would still scan them again and again while the batch grows
(measured: half the CPU of a 1000-entry Write into a 64k table). Pausing it for the batch and letting
it run once afterwards loses nothing: cyclic garbage made meanwhile is collected then.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def paused() -> Iterator[None]:
    """Nestable and thread-safe: the collector runs again when the last pause ends, if it ran before."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
