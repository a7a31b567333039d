"""The pairwise (shifted-exchange) all-to-all: the same pieces as `direct`, in rounds, ordered per rank and
plane, and no ordering edge between planes (a plane-pinned run stays split by plane)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traffic.checker import check, textbook_total_bytes
from traffic.collectives import make_schedule

KIB64 = 64 * 1024


def _pairs(s) -> dict[tuple[int, int], tuple[int, int]]:
    """(src, dst) -> (bytes, plane) of each transfer; each pair exactly once."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for t in s.transfers:
        assert (t.src, t.dst) not in out, (t.src, t.dst)
        out[(t.src, t.dst)] = (t.bytes, t.plane)
    return out


@pytest.mark.parametrize("n", [2, 5, 16, 32])
@pytest.mark.parametrize("planes", [1, 4])
def test_every_pair_gets_64_kib_on_the_same_plane_as_direct(n: int, planes: int) -> None:
    ranks = [7 + 2 * i for i in range(n)]
    pairwise = make_schedule("all_to_all", ranks, KIB64 * n, "pairwise", planes=planes)
    direct = make_schedule("all_to_all", ranks, KIB64 * n, "direct", planes=planes)
    got = _pairs(pairwise)
    assert len(got) == n * (n - 1)
    assert {b for b, _ in got.values()} == {KIB64}
    assert got == _pairs(direct)
    assert pairwise.algorithm == "pairwise" and pairwise.total_bytes() == direct.total_bytes()
    assert check(pairwise).total_bytes == textbook_total_bytes(pairwise)


@pytest.mark.parametrize("window", [1, 3])
def test_rounds_are_ordered_per_rank_and_plane(window: int) -> None:
    n, planes = 12, 4
    s = make_schedule("all_to_all", list(range(n)), KIB64 * n, "pairwise", planes=planes, window=window)
    by_id = {t.id: t for t in s.transfers}
    for i in range(n):
        for p in range(planes):
            chain = sorted((t for t in s.transfers if t.src == i and t.plane == p), key=lambda t: t.step)
            # round k (step k-1) sends to i+k, rounds in order
            assert [(t.dst - i) % n for t in chain] == [t.step + 1 for t in chain]
            for pos, t in enumerate(chain):
                want = (chain[pos - window].id,) if pos >= window else ()
                assert t.depends_on == want, (i, p, pos)
    for t in s.transfers:  # every edge stays on the sender's plane
        assert all(by_id[d].plane == t.plane and by_id[d].src == t.src for d in t.depends_on)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 14), size=st.integers(1, 200_000), planes=st.integers(1, 5), window=st.integers(1, 4))
def test_any_shape_is_a_correct_all_to_all(n: int, size: int, planes: int, window: int) -> None:
    s = make_schedule("all_to_all", list(range(n)), size, "pairwise", planes=planes, window=window)
    report = check(s)
    assert report.total_bytes == textbook_total_bytes(s)
    assert {t.plane for t in s.transfers} <= set(range(planes))
    plane_of = {t.id: t.plane for t in s.transfers}
    assert all(plane_of[d] == t.plane for t in s.transfers for d in t.depends_on)


@pytest.mark.parametrize("window", [0, -1, 1.5, True])
def test_bad_window_is_a_clear_error(window: object) -> None:
    with pytest.raises(ValueError, match="window"):
        make_schedule("all_to_all", [0, 1, 2], 3000, "pairwise", window=window)


def test_pairwise_is_lossless_where_direct_overflows_the_queues() -> None:
    """UPN 16 GPUs, radix 8 (two tiers: 4 leaves, 2 spines, 2 links between each pair), 200 Gbit/s, 32-frame
    queues, 64 KiB per pair in 4096-byte frames, transport `none`: posting every piece at once (`direct`)
    overflows the leaf uplinks' queues on ECMP collisions; the pairwise exchange delivers every frame."""
    from controller.policies import make_policy
    from topologies.builtins import upn
    from traffic.records import HostConfig
    from traffic.replay import pattern_plan
    from vfabric.control import ControlPlane
    from vfabric.fabric import FabricConfig, VirtualFabric
    from vfabric.run import VirtualLimits, VirtualRun

    result = {}
    for algo in ("direct", "pairwise"):
        topo = upn(gpus=16, planes=1, radix=8, rate_gbps=200, delay_us=0.0)
        fab = VirtualFabric(topo, FabricConfig(queue_depth=32), HostConfig(mtu=4096 + 44))
        control = ControlPlane(fab, make_policy("ecmp"))
        control.start()
        try:
            eids = sorted(ep.eid for ep in topo.endpoints.values())
            plan = pattern_plan("all_to_all", eids, KIB64 * 16, 1, algo)
            out = VirtualRun(fab, control, VirtualLimits(time_limit_s=0.01, wall_limit_s=600)).run(
                plan, HostConfig(flow_rate_bps=200e9))
        finally:
            control.close()
        planned = sum(f.npkts for f in out.result.flows)
        assert planned == 16 * 15 * 16
        delivered = sum(f.delivered for f in out.result.flows)
        drops = sum(sw.drops["queue_full"] for sw in fab.switches.values())
        result[algo] = (delivered, drops, planned)
    d_delivered, d_drops, planned = result["direct"]
    p_delivered, p_drops, _ = result["pairwise"]
    assert d_drops > 0 and d_delivered == planned - d_drops
    assert p_drops == 0 and p_delivered == planned
