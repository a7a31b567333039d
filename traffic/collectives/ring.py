"""Ring algorithms (NCCL's default for large messages): reduce-scatter, all-gather and their composition.

The buffer is cut into n shards, and each shard into `slices` pipelined pieces (NCCL's chunking). Chunk id
`slice * n + shard`. In step j of reduce-scatter rank i sends shard (i - j - 1) mod n to its right
neighbour, which adds it in; after n - 1 steps rank i holds shard i fully reduced. All-gather then circulates
each finished shard n - 1 times. A step of a slice waits only for the same slice of the previous step.
Slices are striped over planes, so a multi-plane endpoint keeps every plane busy.
"""

from __future__ import annotations

from collections.abc import Sequence

from traffic.schedule import COPY, REDUCE, Schedule, ScheduleBuilder, check_ranks, split_bytes


def _layout(n: int, size: int, slices: int) -> list[int]:
    if slices < 1:
        raise ValueError("slices must be >= 1")
    shards = split_bytes(size, n)
    out = [0] * (n * slices)
    for shard, sb in enumerate(shards):
        for s, b in enumerate(split_bytes(sb, slices)):
            out[s * n + shard] = b
    return out


def _reduce_scatter_steps(b: ScheduleBuilder, ranks: tuple[int, ...], slices: int, planes: int) -> dict:
    """Add the n-1 reduce steps; return {(position, slice): id of the last transfer into it}."""
    n = len(ranks)
    last_in: dict[tuple[int, int, int], int] = {}  # (receiver position, shard, slice) -> transfer id
    for j in range(n - 1):
        new_in: dict[tuple[int, int, int], int] = {}
        for i in range(n):
            shard = (i - j - 1) % n
            for s in range(slices):
                dep = last_in.get((i, shard, s), -1)
                tid = b.add(ranks[i], ranks[(i + 1) % n], [s * n + shard], REDUCE, [dep], step=j,
                            plane=s % planes)
                new_in[((i + 1) % n, shard, s)] = tid
        last_in = new_in
    return last_in


def _all_gather_steps(b: ScheduleBuilder, ranks: tuple[int, ...], slices: int, planes: int,
                      ready: dict[tuple[int, int, int], int], step0: int) -> None:
    """Circulate shard i from rank i; `ready` says which transfer made (position, shard, slice) final."""
    n = len(ranks)
    last_in = dict(ready)
    for j in range(n - 1):
        new_in: dict[tuple[int, int, int], int] = {}
        for i in range(n):
            shard = (i - j) % n
            for s in range(slices):
                dep = last_in.get((i, shard, s), -1)
                tid = b.add(ranks[i], ranks[(i + 1) % n], [s * n + shard], COPY, [dep], step=step0 + j,
                            plane=s % planes)
                new_in[((i + 1) % n, shard, s)] = tid
        last_in = new_in


def _shard_owner(ranks: tuple[int, ...], slices: int) -> list[int]:
    n = len(ranks)
    return [ranks[c % n] for c in range(n * slices)]


def ring_reduce_scatter(ranks: Sequence[int], size: int, slices: int = 1, planes: int = 1) -> Schedule:
    """Reduce-scatter of a `size`-byte input: rank i ends with shard i reduced over all ranks."""
    ranks = check_ranks(ranks)
    n = len(ranks)
    b = ScheduleBuilder(_layout(n, size, slices), planes)
    _reduce_scatter_steps(b, ranks, slices, planes)
    owner = _shard_owner(ranks, slices)
    return b.build("reduce_scatter", "ring", ranks, size, [None] * len(owner), owner,
                   slices=slices, planes=planes)


def ring_all_gather(ranks: Sequence[int], size: int, slices: int = 1, planes: int = 1) -> Schedule:
    """All-gather into a `size`-byte output buffer: rank i contributes shard i."""
    ranks = check_ranks(ranks)
    n = len(ranks)
    b = ScheduleBuilder(_layout(n, size, slices), planes)
    _all_gather_steps(b, ranks, slices, planes, {}, 0)
    owner = _shard_owner(ranks, slices)
    return b.build("all_gather", "ring", ranks, size, owner, [None] * len(owner), slices=slices, planes=planes)


def ring_all_reduce(ranks: Sequence[int], size: int, slices: int = 1, planes: int = 1) -> Schedule:
    """All-reduce = ring reduce-scatter followed by ring all-gather (2(n-1) steps)."""
    ranks = check_ranks(ranks)
    n = len(ranks)
    b = ScheduleBuilder(_layout(n, size, slices), planes)
    ready = _reduce_scatter_steps(b, ranks, slices, planes)
    _all_gather_steps(b, ranks, slices, planes, ready, n - 1)
    nch = n * slices
    return b.build("all_reduce", "ring", ranks, size, [None] * nch, [None] * nch, slices=slices, planes=planes)
