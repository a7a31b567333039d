"""One counter of the writes a data-plane lookup could see (tables, action profiles, watch-port liveness).

The native pipeline (p4exec/native) keeps C lookup indexes of the runtime tables; it compares this counter once
per packet and rebuilds the indexes of the objects whose own `generation` moved. The runtime objects stay the
only owners of P4Runtime state.
"""
from __future__ import annotations


class _Writes:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


WRITES = _Writes()
