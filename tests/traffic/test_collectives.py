"""Every pattern is a correct collective for n in {2,3,4,8,16}, and moves the textbook number of bytes."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traffic.checker import ScheduleError, check, textbook_total_bytes
from traffic.collectives import make_schedule
from traffic.schedule import REDUCE, Schedule, apply_offsets

NS = [2, 3, 4, 8, 16]
CASES = [
    ("all_reduce", "ring", {"slices": 2}),
    ("all_reduce", "tree", {"slices": 3}),
    ("all_reduce", "rhd", {}),
    ("reduce_scatter", "ring", {}),
    ("all_gather", "ring", {"slices": 2}),
    ("all_to_all", "direct", {}),
    ("all_to_all", "direct", {"skew": 1.2, "phase": "both", "seed": 7}),
    ("all_to_all", "pairwise", {"planes": 3}),
    ("all_to_all", "pairwise", {"planes": 2, "window": 2}),
    ("broadcast", "ring", {"slices": 4}),
    ("broadcast", "binomial", {}),
    ("sendrecv", "gpipe", {"microbatches": 3}),
    ("incast", "direct", {"slices": 2}),
]


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize(("pattern", "algo", "kw"), CASES, ids=[f"{p}-{a}-{i}" for i, (p, a, _) in enumerate(CASES)])
def test_pattern_is_correct_collective(pattern: str, algo: str, kw: dict, n: int) -> None:
    ranks = [10 + 3 * i for i in range(n)]  # arbitrary endpoint ids, not 0..n-1
    s = make_schedule(pattern, ranks, 4096 * n + 5, algo, **kw)
    report = check(s)
    assert report.total_bytes == textbook_total_bytes(s)
    assert set(report.bytes_per_rank) == set(ranks)


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("algo", ["ring", "rhd"])
def test_all_reduce_per_rank_bytes_textbook(n: int, algo: str) -> None:
    size = 3 * 16 * 1024  # divisible by every n used with both algorithms' shard counts
    s = make_schedule("all_reduce", list(range(n)), size, algo)
    per = check(s).bytes_per_rank
    if algo == "rhd" and n & (n - 1):
        return  # non-power-of-two folding is asymmetric by design; the total is checked elsewhere
    assert all(b * n == 2 * (n - 1) * size for b in per.values()), per


@pytest.mark.parametrize("n", NS)
def test_ring_reduce_scatter_leaves_each_rank_its_shard(n: int) -> None:
    ranks = list(range(n))
    s = make_schedule("reduce_scatter", ranks, 1000 * n, "ring", slices=2)
    final = check(s).final
    for c, owner in enumerate(s.chunk_dest):
        assert owner == ranks[c % n]
        assert final[(owner, c)] == {r: 1 for r in ranks}


@pytest.mark.parametrize("n", NS)
def test_gather_family_per_rank_bytes(n: int) -> None:
    size = 1024 * n
    for pattern in ("all_gather", "reduce_scatter", "all_to_all"):
        s = make_schedule(pattern, list(range(n)), size)
        assert set(check(s).bytes_per_rank.values()) == {(n - 1) * size // n}


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 12), size=st.integers(1, 50_000), slices=st.integers(1, 4), planes=st.integers(1, 4),
       algo=st.sampled_from(["ring", "tree", "rhd"]))
def test_all_reduce_any_shape(n: int, size: int, slices: int, planes: int, algo: str) -> None:
    kw = {"planes": planes} if algo == "rhd" else {"slices": slices, "planes": planes}
    s = make_schedule("all_reduce", list(range(n)), size, algo, **kw)
    report = check(s)
    assert report.total_bytes == textbook_total_bytes(s)
    assert {t.plane for t in s.transfers} <= set(range(planes))


def test_planes_striping_uses_every_plane() -> None:
    s = make_schedule("all_reduce", list(range(8)), 1 << 20, "ring", slices=4, planes=4)
    per_plane = {p: sum(t.bytes for t in s.transfers if t.plane == p) for p in range(4)}
    assert len(per_plane) == 4 and max(per_plane.values()) - min(per_plane.values()) <= 64


def test_deterministic_for_same_parameters() -> None:
    a = make_schedule("moe", list(range(8)), 100_000, seed=3)
    b = make_schedule("moe", list(range(8)), 100_000, seed=3)
    c = make_schedule("moe", list(range(8)), 100_000, seed=4)
    assert a == b and a != c


def test_skew_makes_hot_experts() -> None:
    s = make_schedule("all_to_all", list(range(8)), 80_000, skew=1.5, seed=1)
    into = {r: sum(t.bytes for t in s.transfers if t.dst == r) for r in range(8)}
    assert max(into.values()) > 3 * min(into.values())


def test_offsets_delay_a_ranks_transfers() -> None:
    s = apply_offsets(make_schedule("all_reduce", [0, 1, 2, 3], 4000), {2: 0.5})
    assert {t.offset_s for t in s.transfers if t.src == 2} == {0.5}
    assert {t.offset_s for t in s.transfers if t.src != 2} == {0.0}
    check(s)


# --- the checker rejects wrong schedules -------------------------------------------------------------------

def _replace(s: Schedule, transfers) -> Schedule:
    return dataclasses.replace(s, transfers=tuple(transfers))


def test_checker_rejects_missing_step() -> None:
    s = make_schedule("all_gather", list(range(4)), 4000)
    last = s.transfers[-1]
    with pytest.raises(ScheduleError, match="ends with chunk"):
        check(_replace(s, s.transfers[:-1]))
    assert last.id == len(s.transfers) - 1


def test_checker_rejects_missing_dependency_as_race() -> None:
    s = make_schedule("all_reduce", list(range(4)), 4000)
    ts = list(s.transfers)
    victim = next(t for t in ts if t.depends_on)
    ts[victim.id] = dataclasses.replace(victim, depends_on=())
    with pytest.raises(ScheduleError, match="race"):
        check(_replace(s, ts))


def test_checker_rejects_double_counting() -> None:
    s = make_schedule("reduce_scatter", list(range(3)), 3000)
    t0 = s.transfers[0]
    dup = dataclasses.replace(t0, id=len(s.transfers), depends_on=(t0.id,), op=REDUCE)
    with pytest.raises(ScheduleError, match="twice|race"):
        check(_replace(s, [*s.transfers, dup]))


def test_checker_rejects_wrong_byte_count() -> None:
    s = make_schedule("broadcast", list(range(3)), 3000)
    ts = list(s.transfers)
    ts[0] = dataclasses.replace(ts[0], bytes=ts[0].bytes + 1)
    with pytest.raises(ScheduleError, match="bytes"):
        check(_replace(s, ts))


def test_bad_parameters_raise() -> None:
    with pytest.raises(ValueError):
        make_schedule("all_reduce", [1], 10)
    with pytest.raises(ValueError):
        make_schedule("all_reduce", [1, 1], 10)
    with pytest.raises(ValueError):
        make_schedule("nonsense", [1, 2], 10)
    with pytest.raises(ValueError):
        make_schedule("all_reduce", [1, 2], 10, "nope")


def test_checker_rejects_ordered_double_reduction() -> None:
    # two ranks; rank 0 reduces its chunk into rank 1 twice, strictly one after the other
    s = make_schedule("reduce_scatter", [0, 1], 2000)
    t0 = s.transfers[0]
    dup = dataclasses.replace(t0, id=1, depends_on=(0,))
    with pytest.raises(ScheduleError, match="twice"):
        check(_replace(s, [t0, dup, *[dataclasses.replace(t, id=t.id + 1) for t in s.transfers[1:]]]))
