"""All-to-all, plain or as MoE dispatch/combine with skewed expert popularity.

Each rank's `size`-byte send buffer is split over all ranks (its own piece stays local). With `skew` > 0 the
split follows a Zipf-like popularity of the destination "experts" (a seeded permutation decides which ranks
are hot), as token routing does in mixture-of-experts layers. Combine sends every piece back to its source,
after the expert has received all of its tokens.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from traffic.schedule import COPY, Schedule, ScheduleBuilder, check_ranks, split_bytes


def skewed_split(total: int, n: int, skew: float, seed: int) -> list[int]:
    """Split `total` over n destinations with weights 1/(1+popularity rank)^skew, summing exactly."""
    if skew <= 0:
        return split_bytes(total, n)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    weights = [1.0 / (1 + order[j]) ** skew for j in range(n)]
    wsum = sum(weights)
    exact = [total * w / wsum for w in weights]
    out = [int(x) for x in exact]
    rest = total - sum(out)
    for j in sorted(range(n), key=lambda j: (out[j] - exact[j], j))[:rest]:
        out[j] += 1
    return out


def all_to_all(ranks: Sequence[int], size: int, skew: float = 0.0, phase: str = "dispatch",
               seed: int = 0, planes: int = 1) -> Schedule:
    """`phase`: "dispatch" (plain all-to-all), "combine" (the reverse) or "both" (combine after dispatch)."""
    ranks = check_ranks(ranks)
    if phase not in ("dispatch", "combine", "both"):
        raise ValueError(f"phase must be dispatch, combine or both, not {phase!r}")
    n = len(ranks)
    pieces = [skewed_split(size, n, skew, seed) for _ in range(n)]
    chunk_bytes = [pieces[i][j] for i in range(n) for j in range(n)]
    home: list[int | None] = []
    dest: list[int | None] = []
    if phase in ("dispatch", "both"):
        home += [ranks[i] for i in range(n) for j in range(n)]
        dest += [ranks[j] for i in range(n) for j in range(n)]
    if phase in ("combine", "both"):
        home += [ranks[j] for i in range(n) for j in range(n)]
        dest += [ranks[i] for i in range(n) for j in range(n)]
    if phase == "both":
        chunk_bytes = chunk_bytes * 2
    b = ScheduleBuilder(chunk_bytes, planes)
    into: dict[int, list[int]] = {j: [] for j in range(n)}
    base = 0
    if phase in ("dispatch", "both"):
        for k in range(1, n):  # round k: everybody sends to the rank k to its right
            for i in range(n):
                j = (i + k) % n
                into[j].append(b.add(ranks[i], ranks[j], [i * n + j], COPY, step=0, plane=(i + j) % planes))
        base = n * n if phase == "both" else 0
    if phase in ("combine", "both"):
        for k in range(1, n):
            for j in range(n):
                i = (j + k) % n
                deps = into[j] if phase == "both" else []
                b.add(ranks[j], ranks[i], [base + i * n + j], COPY, deps, step=1, plane=(i + j) % planes)
    return b.build("all_to_all", "direct" if skew <= 0 else "moe", ranks, size, home, dest,
                   skew=skew, phase=phase, seed=seed, planes=planes)


def pairwise_all_to_all(ranks: Sequence[int], size: int, planes: int = 1, window: int = 1) -> Schedule:
    """The shifted (pairwise) exchange of MPI and NCCL: in round k (1..n-1) rank i sends its piece for rank
    i+k. All pieces are posted at once in `direct`, so every destination is an incast of n-1 senders and a
    two-tier fabric's ECMP collisions overflow its queues; here a rank has at most `window` pieces in flight
    per plane, each round waiting for its own round `window` earlier on that plane to have arrived.

    The same bytes per pair and the same plane per pair ((i + j) mod planes) as `direct`, so the two are
    comparable piece for piece; the ordering edges stay on one plane (a plane-pinned run still falls apart
    into independent planes, vfabric/partition.py)."""
    ranks = check_ranks(ranks)
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be a whole number >= 1, got {window!r}")
    n = len(ranks)
    pieces = split_bytes(size, n)
    b = ScheduleBuilder([pieces[j] for _ in range(n) for j in range(n)], planes)
    in_flight: dict[tuple[int, int], list[int]] = {}  # (rank, plane) -> its transfers on that plane, in order
    for k in range(1, n):
        for i in range(n):
            j = (i + k) % n
            plane = (i + j) % planes
            chain = in_flight.setdefault((i, plane), [])
            deps = [chain[-window]] if len(chain) >= window else []
            chain.append(b.add(ranks[i], ranks[j], [i * n + j], COPY, deps, step=k - 1, plane=plane))
    home = [ranks[i] for i in range(n) for _ in range(n)]
    dest = [ranks[j] for _ in range(n) for j in range(n)]
    return b.build("all_to_all", "pairwise", ranks, size, home, dest, planes=planes, window=window)
