"""Point-to-point families: chain/binomial broadcast, pipeline-parallel send/recv and incast (N -> 1)."""

from __future__ import annotations

from collections.abc import Sequence

from traffic.schedule import COPY, Schedule, ScheduleBuilder, check_ranks, split_bytes


def broadcast(ranks: Sequence[int], size: int, root: int | None = None, algorithm: str = "ring",
              slices: int = 1, planes: int = 1) -> Schedule:
    """Broadcast `size` bytes from `root` (default the first rank).

    "ring": a pipelined chain (NCCL's broadcast), each slice forwarded as soon as it arrives;
    "binomial": in round d every rank that has the data sends it to the rank 2^d further on.
    """
    ranks = check_ranks(ranks)
    root = ranks[0] if root is None else root
    if root not in ranks:
        raise ValueError(f"root {root} is not a participant")
    if slices < 1:
        raise ValueError("slices must be >= 1")
    r0 = ranks.index(root)
    order = ranks[r0:] + ranks[:r0]
    n = len(order)
    b = ScheduleBuilder(split_bytes(size, slices), planes)
    if algorithm == "ring":
        for s in range(slices):
            prev = -1
            for k in range(n - 1):
                prev = b.add(order[k], order[k + 1], [s], COPY, [prev], step=k, plane=s % planes)
    elif algorithm == "binomial":
        got: dict[int, int] = {0: -1}
        d, step = 1, 0
        while d < n:
            for rel in range(d):
                if rel + d < n:
                    got[rel + d] = b.add(order[rel], order[rel + d], list(range(slices)), COPY, [got[rel]],
                                         step=step)
            d *= 2
            step += 1
    else:
        raise ValueError(f"unknown broadcast algorithm {algorithm!r}")
    return b.build("broadcast", algorithm, ranks, size, [root] * slices, [None] * slices,
                   root=root, slices=slices, planes=planes)


def pipeline_sendrecv(ranks: Sequence[int], size: int, microbatches: int = 4, backward: bool = True,
                      planes: int = 1) -> Schedule:
    """GPipe-style pipeline parallelism: `size` activation bytes per microbatch cross each stage boundary.

    Forward of microbatch m leaves stage i once it has arrived there; with `backward`, gradients flow back
    after the last stage has all microbatches (the pipeline flush), each forwarded when it arrives.
    """
    stages = check_ranks(ranks)
    if microbatches < 1:
        raise ValueError("microbatches must be >= 1")
    s_count = len(stages)
    hops = s_count - 1
    nch = microbatches * hops * (2 if backward else 1)
    b = ScheduleBuilder([size] * nch, planes)
    home: list[int | None] = [None] * nch
    dest: list[int | None] = [None] * nch
    fwd_into: dict[tuple[int, int], int] = {}
    for m in range(microbatches):
        for i in range(hops):
            c = m * hops + i
            home[c], dest[c] = stages[i], stages[i + 1]
            fwd_into[(m, i + 1)] = b.add(stages[i], stages[i + 1], [c], COPY, [fwd_into.get((m, i), -1)],
                                         step=i, plane=m % planes)
    if backward:
        flush = [fwd_into[(m, hops)] for m in range(microbatches)]
        bwd_into: dict[tuple[int, int], int] = {}
        for m in range(microbatches):
            for i in range(hops, 0, -1):
                c = microbatches * hops + m * hops + (i - 1)
                home[c], dest[c] = stages[i], stages[i - 1]
                deps = flush if i == hops else [bwd_into[(m, i)]]
                bwd_into[(m, i - 1)] = b.add(stages[i], stages[i - 1], [c], COPY, deps,
                                             step=hops + (hops - i), plane=m % planes)
    return b.build("sendrecv", "gpipe", stages, size, home, dest, microbatches=microbatches,
                   backward=backward, planes=planes)


def incast(ranks: Sequence[int], size: int, sink: int | None = None, slices: int = 1,
           planes: int = 1) -> Schedule:
    """Every rank but `sink` (default the first) sends `size` bytes to it at once: the classic stress."""
    ranks = check_ranks(ranks)
    sink = ranks[0] if sink is None else sink
    if sink not in ranks:
        raise ValueError(f"sink {sink} is not a participant")
    senders = [r for r in ranks if r != sink]
    per = split_bytes(size, slices)
    b = ScheduleBuilder(per * len(senders), planes)
    home: list[int | None] = []
    for k, src in enumerate(senders):
        for s in range(slices):
            b.add(src, sink, [k * slices + s], COPY, step=0, plane=s % planes)
            home.append(src)
    return b.build("incast", "direct", ranks, size, home, [sink] * len(home), sink=sink, slices=slices,
                   planes=planes)
