"""In-network all-reduce (`inc`): every rank sends its whole vector once up to the switches, which add the
contributions (p4src/include/inc.p4) and send each reduced chunk once down to every rank.

There are no rank-to-rank transfers to schedule: the schedule is the collective's shape (ranks, size, the
per-plane chunking) plus the parameters the endpoints need (traffic/inc/endpoint.py), and the host models run
it with the switches. On the wire each rank sends and receives `size` bytes (plus headers), against
2(n-1)/n x size each way for ring all-reduce: the α-β model's gain (docs/experiments.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from traffic.inc import wire
from traffic.inc.data import IncDataError, Vectors
from traffic.schedule import Schedule, check_ranks


def inc_all_reduce(ranks: Sequence[int], size: int, planes: int = 1, slots: int = 64, timeout_us: float = 200.0,
                   seed: int = 1, max_abs: int | None = None) -> Schedule:
    ranks = check_ranks(ranks)
    if not isinstance(planes, int) or not 1 <= planes <= 8:
        raise ValueError(f"inc: planes must be 1..8 (got {planes!r})")
    if not isinstance(slots, int) or not 1 <= slots <= wire.SLOTS:
        raise ValueError(f"inc: slots must be 1..{wire.SLOTS} (got {slots!r})")
    if not timeout_us > 0:
        raise ValueError(f"inc: timeout_us must be > 0 (got {timeout_us!r})")
    if len(ranks) > 4095:
        raise ValueError(f"inc: at most 4095 ranks (got {len(ranks)})")
    try:
        Vectors(ranks, 1, seed, max_abs)  # the overflow check, before anything runs
    except IncDataError as err:
        raise ValueError(f"inc: {err}") from None
    elems = max(1, -(-size // 4))
    chunks = -(-elems // wire.ELEMS)
    chunk_bytes = [wire.ELEMS * 4] * chunks
    return Schedule("all_reduce", "inc", ranks, size, tuple(chunk_bytes), (None,) * chunks, (None,) * chunks, (),
                    {"planes": planes, "slots": slots, "timeout_us": timeout_us, "seed": seed, "max_abs": max_abs,
                     "in_network": True})
