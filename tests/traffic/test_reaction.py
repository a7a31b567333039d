"""Endpoint reactions, driven with hand-made feedback sequences."""

from __future__ import annotations

import pytest

from traffic.reaction import Dcqcn, HpccWindow, NoReaction, make_reaction


def test_none_keeps_rate() -> None:
    r = NoReaction(1e9)
    st = r.start(0.0)
    r.on_delivery(st, True, 100, 0.001)
    assert r.rate_bps(st, 1.0) == 1e9 and r.window(st) is None


def test_dcqcn_cuts_by_alpha_half_and_recovers() -> None:
    r = Dcqcn(1e9, g=1 / 16, cnp_interval_s=50e-6, timer_s=1e-3, fast_recovery=5, ai_fraction=0.05)
    st = r.start(0.0)
    r.on_delivery(st, True, -1, 0.0001)  # alpha starts at 1: rate halves
    assert st.rate_bps == pytest.approx(0.5e9) and st.target_bps == pytest.approx(1e9)
    assert st.alpha == pytest.approx(1.0)  # (1 - g) * 1 + g
    r.on_delivery(st, True, -1, 0.00012)  # within the CNP interval: ignored
    assert st.rate_bps == pytest.approx(0.5e9) and st.cuts == 1
    r.on_delivery(st, False, -1, 0.0005)  # unmarked packets change nothing
    assert st.cuts == 1
    # one timer period later: fast recovery halfway back to the target
    assert r.rate_bps(st, 0.0001 + 1e-3 + 1e-9) == pytest.approx(0.75e9)
    assert st.alpha == pytest.approx(15 / 16)
    # after many quiet periods the rate is back at line rate, never above
    assert r.rate_bps(st, 0.1) == pytest.approx(1e9, rel=1e-3)
    r.on_delivery(st, True, -1, 0.2)  # second cut uses the decayed alpha
    assert st.rate_bps < 1e9 * (1 - 0.01 / 2)


def test_dcqcn_rate_has_a_floor() -> None:
    r = Dcqcn(1e9, min_fraction=0.1, cnp_interval_s=0)
    st = r.start(0.0)
    for i in range(50):
        r.on_delivery(st, True, -1, i * 1e-6)
    assert st.rate_bps == pytest.approx(1e8)


def test_hpcc_window_follows_queue_depth() -> None:
    r = HpccWindow(1e9, init_window=16, target_qdepth=8, w_ai=1)
    st = r.start(0.0)
    for _ in range(16):  # one window of ACKs reporting 32 queued packets: shrink to 16 * 8/32 + 1
        r.on_delivery(st, False, 32, 0.0)
    assert r.window(st) == pytest.approx(5.0)
    for _ in range(5):  # a quiet window: additive increase
        r.on_delivery(st, False, 2, 0.0)
    assert r.window(st) == pytest.approx(6.0)
    r.on_delivery(st, False, -1, 0.0)  # frames without the field are ignored
    assert st.acked_since_update == 0


def test_make_reaction() -> None:
    assert make_reaction("dcqcn", 1e9).name == "dcqcn"
    with pytest.raises(ValueError):
        make_reaction("bbr", 1e9)
