"""Prove that a schedule is the collective it claims to be, by simulating its data flow symbolically.

Every (rank, chunk) buffer holds a multiset of contributing ranks. A REDUCE transfer adds the sender's
multiset into the receiver's, a COPY replaces it. Before simulating, the checker rejects races: two accesses
to one buffer that the dependencies do not order (only two reductions into the same buffer may run
concurrently, since addition commutes). A race-free schedule has one outcome whatever the timing, so
simulating it in any order consistent with the dependencies proves the result for every run on the wire.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from traffic.schedule import COPY, REDUCE, REDUCE_KINDS, Schedule


class ScheduleError(ValueError):
    """The schedule is malformed, racy or does not compute its collective."""


@dataclass
class CheckReport:
    transfers: int
    total_bytes: int
    bytes_per_rank: dict[int, int]
    depth: int  # longest chain of dependent transfers
    final: dict[tuple[int, int], Counter] = field(repr=False, default_factory=dict)


def _structure(s: Schedule) -> None:
    ranks = set(s.ranks)
    nch = len(s.chunk_bytes)
    if len(s.chunk_home) != nch or len(s.chunk_dest) != nch:
        raise ScheduleError("chunk_home/chunk_dest do not match chunk_bytes")
    for i, t in enumerate(s.transfers):
        if t.id != i:
            raise ScheduleError(f"transfer {i} has id {t.id}")
        if t.src not in ranks or t.dst not in ranks or t.src == t.dst:
            raise ScheduleError(f"transfer {i}: bad endpoints {t.src}->{t.dst}")
        if t.op not in (REDUCE, COPY):
            raise ScheduleError(f"transfer {i}: unknown op {t.op!r}")
        if not t.chunks or any(not 0 <= c < nch for c in t.chunks) or len(set(t.chunks)) != len(t.chunks):
            raise ScheduleError(f"transfer {i}: bad chunk list {t.chunks}")
        if t.bytes != sum(s.chunk_bytes[c] for c in t.chunks):
            raise ScheduleError(f"transfer {i}: {t.bytes} bytes but its chunks hold "
                                f"{sum(s.chunk_bytes[c] for c in t.chunks)}")
        if any(not 0 <= d < i for d in t.depends_on):
            raise ScheduleError(f"transfer {i}: dependencies must name earlier transfers: {t.depends_on}")


def _ancestors(s: Schedule) -> list[int]:
    """Bitset of all transitive dependencies of each transfer."""
    anc: list[int] = []
    for t in s.transfers:
        bits = 0
        for d in t.depends_on:
            bits |= anc[d] | (1 << d)
        anc.append(bits)
    return anc


def _races(s: Schedule, anc: list[int]) -> None:
    access: dict[tuple[int, int], list[tuple[int, str]]] = defaultdict(list)  # -> (transfer, "r"/"w")
    for t in s.transfers:
        for c in t.chunks:
            access[(t.src, c)].append((t.id, "r"))
            access[(t.dst, c)].append((t.id, "w"))
    for (rank, c), acc in access.items():
        writes = [a for a in acc if a[1] == "w"]
        for w, _ in writes:
            for a, kind in acc:
                if a == w:
                    continue
                ordered = (anc[a] >> w) & 1 or (anc[w] >> a) & 1
                both_reduce = kind == "w" and s.transfers[a].op == REDUCE and s.transfers[w].op == REDUCE
                if not ordered and not both_reduce:
                    raise ScheduleError(f"race on rank {rank} chunk {c}: transfers {w} and {a} are not ordered")


def _initial(s: Schedule) -> dict[tuple[int, int], Counter]:
    state: dict[tuple[int, int], Counter] = {}
    for c in range(len(s.chunk_bytes)):
        if s.kind in REDUCE_KINDS:
            for r in s.ranks:
                state[(r, c)] = Counter({r: 1})
        else:
            home = s.chunk_home[c]
            if home is None:
                raise ScheduleError(f"{s.kind}: chunk {c} has no home rank")
            state[(home, c)] = Counter({home: 1})
    return state


def _simulate(s: Schedule, state: dict[tuple[int, int], Counter]) -> None:
    for t in s.transfers:
        for c in t.chunks:
            data = state.get((t.src, c))
            if data is None:
                raise ScheduleError(f"transfer {t.id}: rank {t.src} sends chunk {c} it does not hold")
            if t.op == COPY:
                state[(t.dst, c)] = Counter(data)
                continue
            have = state.get((t.dst, c))
            if have is None:
                raise ScheduleError(f"transfer {t.id}: rank {t.dst} reduces into chunk {c} it does not hold")
            merged = have + data
            twice = [r for r, k in merged.items() if k > 1]
            if twice:
                raise ScheduleError(f"transfer {t.id}: chunk {c} at rank {t.dst} counts ranks {twice} twice")
            state[(t.dst, c)] = merged


def _goal(s: Schedule, state: dict[tuple[int, int], Counter]) -> None:
    everyone = Counter({r: 1 for r in s.ranks})
    for c in range(len(s.chunk_bytes)):
        want = everyone if s.kind in REDUCE_KINDS else Counter({s.chunk_home[c]: 1})
        holders = s.ranks if s.chunk_dest[c] is None else (s.chunk_dest[c],)
        for r in holders:
            got = state.get((r, c)) if r is not None else None
            if got != want:
                raise ScheduleError(f"{s.kind}: rank {r} ends with chunk {c} = {dict(got or {})}, "
                                    f"expected {dict(want)}")


def _kind_rules(s: Schedule) -> None:
    """What the collective's name promises beyond single chunks: who gets how much."""
    n, total = s.n, sum(s.chunk_bytes)
    if s.kind in ("all_reduce", "all_gather", "broadcast") and any(d is not None for d in s.chunk_dest):
        raise ScheduleError(f"{s.kind}: every rank must end with every chunk")
    if s.kind in ("all_reduce", "reduce_scatter", "all_gather", "broadcast") and total != s.size:
        raise ScheduleError(f"{s.kind}: chunks hold {total} bytes, message is {s.size}")
    if s.kind in ("reduce_scatter", "all_gather"):
        per: Counter[int | None] = Counter()
        for c, b in enumerate(s.chunk_bytes):
            per[s.chunk_dest[c] if s.kind == "reduce_scatter" else s.chunk_home[c]] += b
        if set(per) != set(s.ranks) or max(per.values()) - min(per.values()) > 1:
            raise ScheduleError(f"{s.kind}: shards are not one per rank of equal size: {dict(per)}")
    if s.kind == "all_to_all":
        pairs = Counter((s.chunk_home[c], s.chunk_dest[c]) for c in range(len(s.chunk_bytes)))
        if any(pairs[(a, b)] < 1 for a in s.ranks for b in s.ranks):
            raise ScheduleError("all_to_all: some rank pair exchanges nothing")
        if s.params.get("phase", "dispatch") == "dispatch" and total != n * s.size:
            raise ScheduleError(f"all_to_all: {total} bytes moved, expected {n} x {s.size}")


def check(s: Schedule) -> CheckReport:
    """Raise ScheduleError unless `s` is a race-free, correct instance of `s.kind`; report its shape."""
    if s.params.get("in_network"):  # the switches reduce (traffic/collectives/inc.py): nothing point to point
        if s.transfers or s.kind != "all_reduce":
            raise ScheduleError("an in-network schedule is an all-reduce without transfers")
        per = sum(s.chunk_bytes)
        return CheckReport(0, per * s.n, {r: per for r in s.ranks}, 1)
    _structure(s)
    _kind_rules(s)
    anc = _ancestors(s)
    _races(s, anc)
    state = _initial(s)
    _simulate(s, state)
    _goal(s, state)
    depth = [0] * len(s.transfers)
    for t in s.transfers:
        depth[t.id] = 1 + max((depth[d] for d in t.depends_on), default=0)
    return CheckReport(len(s.transfers), s.total_bytes(), s.bytes_sent_by(), max(depth, default=0), state)


def textbook_total_bytes(s: Schedule) -> int:
    """Bytes the textbook analysis says the algorithm puts on the wire (all ranks together)."""
    n, size = s.n, s.size
    if s.kind == "all_reduce":
        if s.algorithm == "recursive_halving_doubling":
            p = 1 << (n.bit_length() - 1)
            return 2 * (p - 1) * size + 2 * (n - p) * size
        return 2 * (n - 1) * size  # ring: 2(n-1)/n per rank; tree: size/2 up and down each of 2(n-1) edges
    if s.kind in ("reduce_scatter", "all_gather"):
        return (n - 1) * size
    if s.kind == "broadcast":
        return (n - 1) * size
    if s.kind == "all_to_all":
        diag = sum(s.chunk_bytes[c] for c in range(len(s.chunk_bytes)) if s.chunk_home[c] == s.chunk_dest[c])
        return sum(s.chunk_bytes) - diag
    if s.kind == "incast":
        return (n - 1) * size
    if s.kind == "sendrecv":
        hops = n - 1
        return hops * size * s.params["microbatches"] * (2 if s.params.get("backward", True) else 1)
    raise ScheduleError(f"no textbook total for {s.kind}")
