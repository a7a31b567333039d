"""The event core and links: deterministic order, clear errors instead of hangs."""

from __future__ import annotations

import pytest

from vfabric.events import SimError, Simulator
from vfabric.links import Link


def test_same_time_events_run_in_scheduling_order() -> None:
    sim = Simulator()
    seen: list[str] = []
    for name in "abc":
        sim.at(10, seen.append, name)
    sim.at(5, seen.append, "first")
    sim.after(10, seen.append, "d")  # also at t=10, scheduled last
    stats = sim.run()
    assert seen == ["first", "a", "b", "c", "d"]
    assert stats.reason == "idle" and stats.now_ns == 10 and stats.events == 5


def test_events_in_the_past_and_negative_delays_are_errors() -> None:
    sim = Simulator()
    sim.at(100, lambda: None)
    sim.run()
    with pytest.raises(SimError, match="in the past"):
        sim.at(99, lambda: None)
    with pytest.raises(SimError, match="negative delay"):
        sim.after(-1, lambda: None)
    with pytest.raises(SimError, match="integer"):
        sim.at(150.5, lambda: None)  # type: ignore[arg-type]
    with pytest.raises(SimError, match="in the past"):
        sim.run(until_ns=50)


def test_zero_or_negative_link_rate_is_an_error() -> None:
    sim = Simulator()
    with pytest.raises(SimError, match="rate must be > 0"):
        Link(sim, "a<->b", 0, 0)
    with pytest.raises(SimError, match="rate must be > 0"):
        Link(sim, "a<->b", -5e9, 0)
    with pytest.raises(SimError, match="negative propagation"):
        Link(sim, "a<->b", 1e9, -1)


def test_limits_stop_the_run_and_say_why() -> None:
    sim = Simulator()

    def again() -> None:
        sim.after(1000, again)

    sim.at(0, again)
    stats = sim.run(until_ns=1_000_000)
    assert stats.reason == "until" and sim.now == 1_000_000
    stats = sim.run(wall_limit_s=0.05)  # would run forever: the wall-clock limit ends it
    assert stats.reason == "wall" and sim.now > 1_000_000


def test_serialisation_counts_wire_overhead() -> None:
    sim = Simulator()
    link = Link(sim, "x", 400e9, 0)
    assert link.serialisation_ns(1500) == pytest.approx((1500 + 24) * 8 / 400)
    assert link.serialisation_ns(10) == pytest.approx((60 + 24) * 8 / 400)  # padded to the minimum frame
