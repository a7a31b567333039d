"""The NIC plane-choice model (traffic/planes.py) the replay engine and vfabric share, driven with scripted
times and loads."""

from __future__ import annotations

import pytest

from traffic.planes import PathHealth, PlaneChoice, flow_planes

AVOID_NS = 1_000


def _choice(policy: str, n: int = 4, npkts: int = 64, health: PathHealth | None = None) -> PlaneChoice:
    return PlaneChoice(policy, n, npkts, health or PathHealth(n), AVOID_NS, ent=7)


def test_flow_planes_start_on_the_schedule_plane() -> None:
    assert flow_planes("pinned", [0, 1, 2, 3], [0, 1, 2, 3], 2) == [2]
    assert flow_planes("round-robin", [0, 1, 2, 3], [0, 1, 2, 3], 2) == [2, 3, 0, 1]
    assert flow_planes("least-loaded", [0, 1, 2], [1, 2, 3], 2) == [2, 1]  # only the common planes
    assert flow_planes("round-robin", [0], [1], 0) == [0]  # nothing in common: its own plane


def test_round_robin_cycles_and_skips_a_suspect_plane() -> None:
    c = _choice("round-robin")
    loads = [0, 0, 0, 0]
    picks = []
    for psn in range(8):
        picks.append(c.choose(10, loads.__getitem__))
        assert c.taken(psn, False, 10, 0, loads.__getitem__) == picks[-1]
        c.sent(10)
    assert picks == [1, 2, 3, 0, 1, 2, 3, 0]
    # PSN 2 went on path 3; its retransmission marks path 3 suspect and moves off it if it is the current one
    c.k = 3
    t = 10 * AVOID_NS
    assert c.taken(2, True, t, 0, loads.__getitem__) != 3
    assert c.avoid[3] == t + AVOID_NS
    assert [c.choose(t + 1, loads.__getitem__) for _ in range(4)].count(3) == 0  # skipped while suspect
    assert 3 in [c.choose(t + AVOID_NS, loads.__getitem__) for _ in range(4)]  # and back afterwards


def test_least_loaded_prefers_the_freest_healthy_port() -> None:
    c = _choice("least-loaded")
    loads = [5, 3, 9, 1]
    assert c.choose(0, loads.__getitem__) == 3
    c.avoid[3] = 100
    assert c.choose(0, loads.__getitem__) == 1
    c.avoid[:] = [100] * 4  # all suspect: still a choice, by load
    assert c.choose(0, loads.__getitem__) == 3


def test_repeated_trouble_keeps_a_plane_away_longer_and_health_is_shared() -> None:
    health = PathHealth(2)
    a, b = _choice("round-robin", 2, health=health), _choice("round-robin", 2, health=health)
    a.k = 0
    a.taken(0, False, 0, 0, lambda _k: 0)
    a.taken(1, False, 0, 0, lambda _k: 0)  # PSNs 0 and 1 both went on path 0
    t = 10 * AVOID_NS
    assert a.taken(0, True, t, 0, lambda _k: 0) == 1  # first trouble: avoided for AVOID_NS, resent on 1
    assert health.avoid[0] == t + AVOID_NS and health.strikes[0] == 0
    a.taken(1, True, t + AVOID_NS, 0, lambda _k: 0)  # again as soon as it is back: twice as long
    assert health.strikes[0] == 1 and health.avoid[0] == t + AVOID_NS + 2 * AVOID_NS
    assert b.avoid is health.avoid  # another flow of the same endpoint pair sees it
    big_rtt = 5 * AVOID_NS
    b.k = 1
    b.taken(3, False, 0, 0, lambda _k: 0)
    b.taken(3, True, 50_000, big_rtt, lambda _k: 0)  # the avoid time is at least 2 srtt
    assert health.avoid[1] == 50_000 + 2 * big_rtt


def test_flowlets_and_entropy() -> None:
    c = PlaneChoice("round-robin", 2, 4, PathHealth(2), AVOID_NS, ent=0x3FFF, spray_unit="flowlet",
                    flowlet_ns=100)
    assert c.due(0)
    c.choose(0, lambda _k: 0)
    c.sent(0)
    assert not c.due(50) and c.due(101)
    assert c.ent == 0  # wraps within the 14 entropy bits
    buf = bytearray(4)
    c.stamp_entropy(buf, 1)
    assert buf == bytearray([0, 0xC0, 0x00, 0])
    with pytest.raises(ValueError, match="round-robin or least-loaded"):
        PlaneChoice("pinned", 2, 4, PathHealth(2), AVOID_NS, 0)
