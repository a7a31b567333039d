"""Recursive halving-doubling all-reduce (Rabenseifner): reduce-scatter by halving, all-gather by doubling.

Works on the largest power of two p <= n. With r = n - p extra ranks, the first 2r ranks pair up first: the
even one hands its whole buffer to its odd neighbour (reduce) and gets the final result back at the end. In
halving step with distance d, a rank swaps half of its current range with the rank d away and keeps
reducing the half it kept; after log2(p) steps each core rank owns one fully reduced shard, and doubling
reverses the exchange with copies. Every send waits for the transfers that last wrote the chunks it carries.
"""

from __future__ import annotations

from collections.abc import Sequence

from traffic.schedule import COPY, REDUCE, Schedule, ScheduleBuilder, check_ranks, split_bytes


def recursive_halving_doubling_all_reduce(ranks: Sequence[int], size: int, planes: int = 1) -> Schedule:
    ranks = check_ranks(ranks)
    n = len(ranks)
    p = 1 << (n.bit_length() - 1)
    extra = n - p
    b = ScheduleBuilder(split_bytes(size, p), planes)
    # (rank, chunk) -> transfers whose writes make up the current value (several concurrent reductions)
    writers: dict[tuple[int, int], list[int]] = {}

    def send(src: int, dst: int, chunks: list[int], op: str, step: int) -> None:
        deps = [w for c in chunks for w in writers.get((src, c), ())]
        tid = b.add(src, dst, chunks, op, deps, step=step, plane=step % planes)
        for c in chunks:
            writers[(dst, c)] = [tid] if op == COPY else writers.get((dst, c), []) + [tid]

    everything = list(range(p))
    for i in range(extra):  # fold the extra ranks in
        send(ranks[2 * i], ranks[2 * i + 1], everything, REDUCE, 0)
    core = [ranks[2 * i + 1] for i in range(extra)] + list(ranks[2 * extra:])
    lo = [0] * p
    hi = [p] * p
    step = 1
    d = p // 2
    while d >= 1:  # halving: reduce-scatter
        nlo, nhi = lo[:], hi[:]
        for k in range(p):
            mid = (lo[k] + hi[k]) // 2
            give = range(mid, hi[k]) if k & d == 0 else range(lo[k], mid)
            send(core[k], core[k ^ d], list(give), REDUCE, step)
            nlo[k], nhi[k] = (lo[k], mid) if k & d == 0 else (mid, hi[k])
        lo, hi = nlo, nhi
        d //= 2
        step += 1
    d = 1
    while d < p:  # doubling: all-gather
        nlo, nhi = lo[:], hi[:]
        for k in range(p):
            send(core[k], core[k ^ d], list(range(lo[k], hi[k])), COPY, step)
            nlo[k], nhi[k] = min(lo[k], lo[k ^ d]), max(hi[k], hi[k ^ d])
        lo, hi = nlo, nhi
        d *= 2
        step += 1
    for i in range(extra):  # hand the result back to the folded ranks
        send(ranks[2 * i + 1], ranks[2 * i], everything, COPY, step)
    return b.build("all_reduce", "recursive_halving_doubling", ranks, size, [None] * p, [None] * p,
                   planes=planes)
