"""Collective schedules as plain data: point-to-point transfers with their data dependencies.

A schedule is what a collective algorithm does on the wire, written down so that the checker can prove it
correct, the metrics can count its bytes and the replay engine can send it. Nothing here knows about packets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

#: How the receiver combines an arriving chunk with what it holds.
REDUCE = "reduce"  # receiver adds the incoming partial sum to its own
COPY = "copy"  # receiver overwrites its buffer with the incoming data

#: Collective kinds. Reduce kinds start with every rank contributing to every chunk.
REDUCE_KINDS = frozenset({"all_reduce", "reduce_scatter", "reduce"})
COPY_KINDS = frozenset({"all_gather", "broadcast", "all_to_all", "sendrecv", "incast"})
KINDS = REDUCE_KINDS | COPY_KINDS


@dataclass(frozen=True)
class Transfer:
    """One point-to-point message: `src` sends the listed chunks to `dst`.

    `depends_on` lists transfer ids (indices in the schedule) that must have fully arrived at their destination
    before this one may start: the data this transfer carries is only ready then. `offset_s` delays the start
    relative to the collective's start (a straggler, a compute gap).
    """

    id: int
    src: int
    dst: int
    bytes: int
    chunks: tuple[int, ...]
    op: str = COPY
    plane: int = 0
    depends_on: tuple[int, ...] = ()
    offset_s: float = 0.0
    step: int = 0

    def packets(self, payload_per_packet: int) -> int:
        """Number of packets this transfer needs at the given payload size (at least one)."""
        return max(1, math.ceil(self.bytes / payload_per_packet))


@dataclass(frozen=True)
class Schedule:
    """One collective (one iteration) on a set of ranks.

    Chunks are the units the checker tracks. `chunk_home[c]` is the rank that holds chunk `c` at the start for
    copy kinds (None for reduce kinds: everybody contributes). `chunk_dest[c]` is the rank that must hold it at
    the end (None: every rank must).
    """

    kind: str
    algorithm: str
    ranks: tuple[int, ...]
    size: int
    chunk_bytes: tuple[int, ...]
    chunk_home: tuple[int | None, ...]
    chunk_dest: tuple[int | None, ...]
    transfers: tuple[Transfer, ...]
    params: dict = field(default_factory=dict, compare=False)

    @property
    def n(self) -> int:
        return len(self.ranks)

    def bytes_sent_by(self) -> dict[int, int]:
        """Bytes each rank puts on the wire (zero for ranks that send nothing)."""
        out = {r: 0 for r in self.ranks}
        for t in self.transfers:
            out[t.src] += t.bytes
        return out

    def total_bytes(self) -> int:
        return sum(t.bytes for t in self.transfers)

    def roots(self) -> list[Transfer]:
        """Transfers that wait for nothing."""
        return [t for t in self.transfers if not t.depends_on]


def split_bytes(total: int, parts: int) -> list[int]:
    """Split `total` bytes into `parts` nearly equal pieces (the first ones one byte larger), summing exactly."""
    if parts <= 0:
        raise ValueError("parts must be positive")
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def check_ranks(ranks: Sequence[int], minimum: int = 2) -> tuple[int, ...]:
    """Validate a participant list: distinct, at least `minimum` of them."""
    out = tuple(int(r) for r in ranks)
    if len(out) < minimum:
        raise ValueError(f"need at least {minimum} participants, got {len(out)}")
    if len(set(out)) != len(out):
        raise ValueError(f"participants must be distinct: {out}")
    return out


class ScheduleBuilder:
    """Accumulates transfers with sequential ids; assigns planes by striping chunks across `planes`."""

    def __init__(self, chunk_bytes: Sequence[int], planes: int = 1) -> None:
        if planes < 1:
            raise ValueError("planes must be >= 1")
        self.chunk_bytes = list(chunk_bytes)
        self.planes = planes
        self.transfers: list[Transfer] = []

    def add(self, src: int, dst: int, chunks: Sequence[int], op: str = COPY,
            depends_on: Sequence[int] = (), step: int = 0, offset_s: float = 0.0,
            plane: int | None = None) -> int:
        """Append a transfer, return its id. Empty chunk lists are not sent (returns -1)."""
        chunks = tuple(chunks)
        if not chunks:
            return -1
        if src == dst:
            raise ValueError(f"transfer from rank {src} to itself")
        tid = len(self.transfers)
        if plane is None:
            plane = chunks[0] % self.planes
        deps = tuple(sorted({d for d in depends_on if d >= 0}))
        nbytes = sum(self.chunk_bytes[c] for c in chunks)
        self.transfers.append(Transfer(tid, src, dst, nbytes, chunks, op, plane, deps, offset_s, step))
        return tid

    def build(self, kind: str, algorithm: str, ranks: Sequence[int], size: int,
              chunk_home: Sequence[int | None], chunk_dest: Sequence[int | None], **params) -> Schedule:
        if kind not in KINDS:
            raise ValueError(f"unknown collective kind {kind!r}")
        return Schedule(kind, algorithm, tuple(ranks), size, tuple(self.chunk_bytes), tuple(chunk_home),
                        tuple(chunk_dest), tuple(self.transfers), dict(params))


def apply_offsets(schedule: Schedule, rank_offsets: dict[int, float]) -> Schedule:
    """Delay every transfer a rank starts by that rank's offset (stragglers, staggered starts)."""
    ts = tuple(Transfer(t.id, t.src, t.dst, t.bytes, t.chunks, t.op, t.plane, t.depends_on,
                        t.offset_s + rank_offsets.get(t.src, 0.0), t.step) for t in schedule.transfers)
    return Schedule(schedule.kind, schedule.algorithm, schedule.ranks, schedule.size, schedule.chunk_bytes,
                    schedule.chunk_home, schedule.chunk_dest, ts, schedule.params)
