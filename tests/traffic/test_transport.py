"""Transport state machines on scripted loss, trimming, reordering and duplicate patterns, and hypothesis
properties: every PSN delivered to the application exactly once, no deadlock, bounded retransmissions."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from traffic.transport import ACK, CNP, NAK, Feedback, TransportParams, make_transport, transport_params

# ------------------------------------------------- a scripted channel driving one sender/receiver pair

DELAY_NS = 10_000  # one-way delay
GAP_NS = 1_000  # between two transmissions of the sender


@dataclass
class Fate:
    drop: bool = False
    trim: bool = False
    dup: bool = False
    extra_ns: int = 0


@dataclass
class SimResult:
    delivered_psns: list[int]
    sender: object
    receiver: object
    drops: int
    ack_drops: int
    end_ns: int
    finished: bool
    fates: list[Fate] = field(default_factory=list)


def simulate(name: str, npkts: int, data_fate: Callable[[int, int], Fate] | None = None,
             ack_drop: Callable[[int], bool] | None = None, params: TransportParams | None = None,
             max_events: int = 200_000) -> SimResult:
    """Run to completion (or until `max_events`): data_fate(tx_index, psn), ack_drop(feedback_index)."""
    p = params or TransportParams(ack_every=4, ack_delay_ns=30_000, rto_ns=400_000, rto_init_ns=400_000,
                                  reorder_ns=50_000, window=64)
    snd, rcv = make_transport(name, npkts, p)
    events: list[tuple[int, int, str, object]] = []
    tick = 0
    delivered: list[int] = []
    drops = ack_drops = tx = fbn = 0

    def push(t: int, kind: str, obj: object) -> None:
        nonlocal tick
        tick += 1
        heapq.heappush(events, (t, tick, kind, obj))

    def feedback(now: int, fbs: list[Feedback]) -> None:
        nonlocal fbn, ack_drops
        for fb in fbs:
            fbn += 1
            if ack_drop and ack_drop(fbn):
                ack_drops += 1
                continue
            push(now + DELAY_NS, "fb", fb)

    now = 0
    push(0, "send", None)
    n = 0
    while events and n < max_events:
        n += 1
        now, _, kind, obj = heapq.heappop(events)
        if kind == "send":
            psn = snd.take(now)
            if psn is not None:
                fate = data_fate(tx, psn) if data_fate else Fate()
                tx += 1
                if fate.drop:
                    drops += 1
                else:
                    push(now + DELAY_NS + fate.extra_ns, "data", (psn, fate.trim, now))
                    if fate.dup:
                        push(now + DELAY_NS + fate.extra_ns + 500, "data", (psn, False, now))
                push(now + GAP_NS, "send", None)
            else:
                # idle: wake at the sender's timer (feedback arrivals also wake it)
                t = snd.next_timer()
                if t is not None:
                    push(max(t, now + 1), "stimer", None)
        elif kind == "stimer":
            snd.on_timer(now)
            push(now, "send", None)
        elif kind == "data":
            psn, trimmed, sent_at = obj
            before = rcv.delivered
            feedback(now, rcv.on_data(psn, now, trimmed=trimmed, tx_ns=sent_at))
            if rcv.delivered > before:
                delivered.append(psn)
            t = rcv.next_timer()
            if t is not None:
                push(t, "rtimer", None)
        elif kind == "rtimer":
            feedback(now, rcv.on_timer(now))
        elif kind == "fb":
            snd.on_feedback(obj, now)
            push(now, "send", None)
        if snd.done and rcv.complete and name != "none":
            break
        if name == "none" and snd.done and not events:
            break
        # collapse duplicate "send" wake-ups: keep the heap small
        if len(events) > 10_000:
            break
    return SimResult(delivered, snd, rcv, drops, ack_drops, now, bool(snd.done and rcv.complete))


N = 40


def _exactly_once(r, npkts: int) -> None:
    assert sorted(r.delivered_psns) == list(range(npkts))


def _drop(*tx_indices: int):
    s = set(tx_indices)
    return lambda i, _psn: Fate(drop=i in s)


@pytest.mark.parametrize("name", ["rc-gbn", "sr"])
def test_clean_channel_no_retransmission(name: str) -> None:
    r = simulate(name, N)
    assert r.finished
    _exactly_once(r, N)
    assert r.sender.retransmitted == 0 and r.receiver.spurious == 0
    assert r.receiver.acks <= N // 4 + 2  # coalesced: one ACK per ack_every packets


def test_gbn_single_loss_nak_and_go_back() -> None:
    r = simulate("rc-gbn", N, _drop(5))
    assert r.finished
    _exactly_once(r, N)
    assert r.delivered_psns == list(range(N))  # in order
    assert r.sender.naks == 1 and r.receiver.naks == 1
    # go-back-N resends 5 and everything sent after it before the NAK came back
    assert r.sender.retransmitted > 1
    assert r.receiver.discarded >= 1 and r.receiver.spurious == r.sender.retransmitted - 1


def test_sr_single_loss_resends_only_it() -> None:
    r = simulate("sr", N, _drop(5))
    assert r.finished
    _exactly_once(r, N)
    assert r.sender.retransmitted == 1 and r.receiver.spurious == 0


@pytest.mark.parametrize("name", ["rc-gbn", "sr"])
def test_tail_loss_recovered(name: str) -> None:
    r = simulate(name, N, _drop(N - 1))
    assert r.finished
    _exactly_once(r, N)
    if name == "sr":  # the tail-loss probe finds it before the RTO
        assert r.sender.probes == 1 and r.sender.timeouts == 0 and r.sender.retransmitted == 1
    else:
        assert r.sender.timeouts >= 1


@pytest.mark.parametrize("name", ["rc-gbn", "sr"])
def test_trimmed_packet_is_naked_at_once(name: str) -> None:
    r = simulate(name, N, lambda i, _p: Fate(trim=i == 7))
    assert r.finished
    _exactly_once(r, N)
    assert r.receiver.trimmed == 1 and r.sender.naks == 1 and r.sender.timeouts == 0


def test_reorder_costs_gbn_spurious_retransmissions_but_not_sr() -> None:
    def late(i, _p):  # every 8th transmission overtaken by the next few (5 us late; SR tolerates 50 us)
        return Fate(extra_ns=5_000 if i % 8 == 3 and i < N else 0)

    g = simulate("rc-gbn", N, late)
    s = simulate("sr", N, late)
    assert g.finished and s.finished
    _exactly_once(g, N)
    _exactly_once(s, N)
    assert g.receiver.spurious > 0 and g.sender.naks > 0
    assert s.sender.retransmitted == 0 and s.receiver.spurious == 0


@pytest.mark.parametrize("name", ["rc-gbn", "sr", "none"])
def test_duplicates_delivered_once(name: str) -> None:
    r = simulate(name, N, lambda i, _p: Fate(dup=i % 3 == 0))
    _exactly_once(r, N)
    assert r.receiver.discarded >= N // 3


def test_unreliable_loses_what_is_dropped() -> None:
    r = simulate("none", N, _drop(3, 9))
    assert sorted(r.delivered_psns) == [p for p in range(N) if p not in (3, 9)]
    assert r.sender.retransmitted == 0 and r.receiver.acks == 0


@pytest.mark.parametrize("name", ["rc-gbn", "sr"])
def test_dead_path_gives_up_after_max_timeouts(name: str) -> None:
    p = TransportParams(rto_ns=100_000, rto_init_ns=100_000, max_timeouts=3, ack_every=4, ack_delay_ns=20_000)
    r = simulate(name, N, lambda i, _p: Fate(drop=i >= 10), params=p)
    assert r.sender.failed and r.sender.done and not r.receiver.complete
    assert r.sender.timeouts == 4


@pytest.mark.parametrize("name", ["rc-gbn", "sr"])
def test_lost_acks_are_repaired(name: str) -> None:
    r = simulate(name, N, ack_drop=lambda k: k % 2 == 0)
    assert r.finished
    _exactly_once(r, N)


def test_cnp_rate_limited_and_ignored_by_sender_window() -> None:
    snd, rcv = make_transport("rc-gbn", 4, TransportParams(cnp_interval_ns=1000))
    out = rcv.on_data(0, 0, ce=True) + rcv.on_data(1, 10, ce=True) + rcv.on_data(2, 2000, ce=True)
    assert [f.kind for f in out if f.kind == CNP] == [CNP, CNP]
    assert snd.on_feedback(Feedback(CNP, 0), 0) == 0


def test_sack_bitmap_layout() -> None:
    _snd, rcv = make_transport("sr", 100, TransportParams(ack_every=100))
    for psn in (0, 2, 5, 66):
        rcv.on_data(psn, 0)
    assert rcv.cum == 1

    bits = rcv.sack()
    assert bits & 1 and bits >> 3 & 1 and not bits >> 1 & 1  # PSNs 2 and 5 = cum+1+0, cum+1+3
    assert bits >> 64 == 0 and bits >> 63 & 1 == 0  # 66 is cum+1+64: beyond the 64-bit bitmap


def test_params_validation() -> None:
    assert transport_params(rto_s=0.01, ack_every=2).rto_ns == 10_000_000
    with pytest.raises(ValueError, match="unknown transport parameter"):
        transport_params(bogus=1)
    with pytest.raises(ValueError, match="must be below rto_ns"):
        transport_params(ack_delay_s=0.1, rto_s=0.01)
    with pytest.raises(ValueError, match="at least 1"):
        transport_params(window=0)
    with pytest.raises(ValueError, match="unknown transport"):
        make_transport("tcp", 3)


def test_feedback_kinds_distinct() -> None:
    assert len({ACK, NAK, CNP}) == 3


# ------------------------------------------------------------------------------------- properties
fates = st.lists(st.sampled_from(["ok", "ok", "ok", "drop", "trim", "dup", "late"]), min_size=0, max_size=120)


def _script(kinds: list[str]):
    def fate(i: int, _psn: int) -> Fate:
        k = kinds[i] if i < len(kinds) else "ok"
        return Fate(drop=k == "drop", trim=k == "trim", dup=k == "dup", extra_ns=30_000 if k == "late" else 0)
    return fate


@settings(max_examples=120, deadline=None)
@given(name=st.sampled_from(["rc-gbn", "sr"]), npkts=st.integers(1, 60), kinds=fates,
       ack_loss=st.sets(st.integers(1, 80), max_size=15))
def test_property_exactly_once_no_deadlock_bounded(name, npkts, kinds, ack_loss) -> None:
    r = simulate(name, npkts, _script(kinds), ack_drop=lambda k: k in ack_loss)
    assert r.finished, "deadlock: the transfer did not finish"
    _exactly_once(r, npkts)
    if name == "rc-gbn":
        assert r.delivered_psns == list(range(npkts))
    impairments = sum(1 for k in kinds if k != "ok") + len(ack_loss)
    window = 64
    # every impairment costs at most a window's worth of resends plus one timeout round
    assert r.sender.retransmitted <= (impairments + r.sender.timeouts) * window
    assert r.sender.sent == npkts + r.sender.retransmitted


@settings(max_examples=80, deadline=None)
@given(npkts=st.integers(1, 60), drops=st.sets(st.integers(0, 59), max_size=20))
@example(npkts=1, drops=set(range(8)))  # one PSN lost 8 times in a row: the sender gives up
@example(npkts=25, drops={3, 9, 14, 19, 20, 22, 23, 26, 27, 29, 34, 35, 36, 42, 44})  # a tail loss: one RTO
def test_property_sr_resends_the_losses(npkts, drops) -> None:
    """No reordering, no ACK loss: selective repeat resends every dropped transmission. Losses the SACKs
    reveal cost exactly their resends; a loss only the RTO finds (the tail of the window) may resend one PSN
    whose transmission was still in flight, so each timeout allows one resend (and one duplicate) more. A PSN
    lost max_timeouts + 1 times in a row makes the sender give up, as RoCE's retry_cnt does."""
    r = simulate("sr", npkts, lambda i, _p: Fate(drop=i in drops))
    snd = r.sender
    if snd.failed:
        assert snd.timeouts > TransportParams().max_timeouts and r.drops > TransportParams().max_timeouts
        assert len(set(r.delivered_psns)) == len(r.delivered_psns)
        return
    assert r.finished
    _exactly_once(r, npkts)
    assert r.drops <= snd.retransmitted <= r.drops + snd.timeouts
    assert r.receiver.spurious <= snd.timeouts
    if snd.timeouts == 0:
        assert snd.retransmitted == r.drops and r.receiver.spurious == 0


def test_rto_follows_the_measured_rtt() -> None:
    """A slow path (RTT 2 ms, far above the 0.4 ms minimum RTO) causes no spurious timeout once the RTT is
    measured, and the RTO settles near RTT + 4 x variation."""
    global DELAY_NS
    old, DELAY_NS = DELAY_NS, 1_000_000
    try:
        r = simulate("sr", N, params=TransportParams(ack_every=4, ack_delay_ns=30_000, rto_ns=400_000,
                                                     rto_init_ns=10_000_000, window=64))
    finally:
        DELAY_NS = old
    assert r.finished and r.sender.timeouts == 0 and r.sender.retransmitted == 0
    assert 2_000_000 <= r.sender.rtt.srtt <= 2_100_000 and r.sender.rtt.rto >= r.sender.rtt.srtt
