"""Switch-local adaptivity of ethplus.p4 (lb_tuning): decisions that cannot herd.

Issue 35's acceptance: two leaves deciding in the same instant with equal information do not all choose the
same port, and the choice is deterministic per seed; plus the mechanisms behind it — a switch counts what
it sent to a port since the last departure, a flowlet ends when its last packet has left (plus a margin),
the probed hop is only near-best, and the decision trace records what was chosen and believed. Decisions
here run ingress only (nothing departs in between), which is what "the same instant" means to a switch.
"""

from __future__ import annotations

from collections import Counter

from controller.lb_trace import decode
from p4exec.runtime import ActionCall
from p4exec.v1model.pipeline import EgressJob
from p4src.wire import LBF_DRAIN_GAP, LBF_LOCAL_LOAD, LBF_NEAR_BEST, LBF_RANDOM_TIE, LBF_TRACE
from tests.support.dataplane import LB, EthPlusSwitch, ethplus_frame, new_switch, probe_frame
from traffic.layers import LB_ADAPTIVE, LB_FLOWLET

UPLINKS = [2, 3, 4, 5]
DLB = LBF_LOCAL_LOAD | LBF_DRAIN_GAP | LBF_RANDOM_TIE


def leaf(seed: int, flags: int, mode: int = LB_FLOWLET, near_slack: int = 0, drain_margin: int = 0,
         gap_us: int = 1_000_000) -> EthPlusSwitch:
    sw = new_switch(seed)
    sw.set_mode(mode, gap_us=gap_us)
    sw.h.state.tables[LB + "lb_tuning"].set_default(
        ActionCall(LB + "set_lb_tuning", (flags, near_slack, drain_margin)))
    sw.add_group(1, UPLINKS)
    sw.route_eid(700, 1, dst_index=7)
    return sw


def decide(sw: EthPlusSwitch, frame: bytes) -> tuple[int, EgressJob]:
    """Ingress only: the port chosen and the job (its departure, if wanted, is `depart`)."""
    jobs = sw.h.pipeline.ingress(1, frame, sw.h.clock_us)
    assert len(jobs) == 1
    return jobs[0].egress_port, jobs[0]


def depart(sw: EthPlusSwitch, job: EgressJob) -> None:
    sw.h.pipeline.egress(job, sw.h.clock_us, None)


def first_choices(seeds: range, flags: int) -> list[int]:
    """Each leaf (own seed, as vfabric gives every switch) decides once for the same packet, same state."""
    return [decide(leaf(seed, flags), ethplus_frame(entropy=0x4242))[0] for seed in seeds]


def test_simultaneous_leaves_with_equal_information_spread_and_repeat_per_seed() -> None:
    seeds = range(1001, 1033)  # 32 leaves
    spread = first_choices(seeds, DLB)
    used = Counter(spread)
    assert set(used) == set(UPLINKS), used  # every candidate chosen by some leaf
    assert max(used.values()) <= 16, used  # no port by more than half of them (expected 8 each)
    pairs = list(zip(spread[::2], spread[1::2], strict=True))
    assert sum(a != b for a, b in pairs) >= len(pairs) // 2, pairs  # two leaves differ in most pairs (3/4)
    assert first_choices(seeds, DLB) == spread  # deterministic per seed
    # without the random tie-break equal information gives one answer everywhere: herding by construction
    assert len(set(first_choices(seeds, LBF_LOCAL_LOAD | LBF_DRAIN_GAP))) == 1


def test_decisions_between_departures_see_each_other() -> None:
    # adaptive mode with no probe learnt: every packet is a fresh least-loaded decision (no flowlets)
    for flags, expect_spread in ((LBF_LOCAL_LOAD | LBF_RANDOM_TIE, True), (LBF_RANDOM_TIE, False)):
        sw = leaf(7, flags, mode=LB_ADAPTIVE)
        used = Counter(decide(sw, ethplus_frame(src_id=i, entropy=i * 977))[0] for i in range(8))
        if expect_spread:
            assert sorted(used.values()) == [2, 2, 2, 2], used  # local load: two each
        else:
            assert len(used) < 4 or max(used.values()) > 2, used  # last departure's depths only: no spread
    sw = leaf(7, DLB)
    jobs = [decide(sw, ethplus_frame(src_id=i, entropy=i))[1] for i in range(3)]
    port = jobs[0].egress_port
    pending = sw.register("port_pending", port)
    assert pending >= 1
    depart(sw, jobs[0])
    assert sw.register("port_pending", port) == 0 and sw.register("port_deq", port) == 1


def test_a_flowlet_moves_only_after_its_last_packet_left_plus_the_margin() -> None:
    for margin in (0, 4):
        sw = leaf(3, DLB, drain_margin=margin)
        first, job1 = decide(sw, ethplus_frame(entropy=0x55, seq=1))
        second, job2 = decide(sw, ethplus_frame(entropy=0x55, seq=2))
        assert second == first  # its first packet is still queued: same port, though busier now
        depart(sw, job1)
        depart(sw, job2)
        sw.h.state.registers["port_qdepth"].write(first, 30)  # now clearly the worst
        third, job3 = decide(sw, ethplus_frame(entropy=0x55, seq=3))
        if margin == 0:
            assert third != first  # both left: a new flowlet, on a less loaded port
        else:
            assert third == first  # left, but not `margin` departures ago
            # it believed 30 packets ahead of it: it leaves at the 31st departure, then `margin` more
            # (a packet sent meanwhile would extend the flowlet: its last packet is what must have left)
            for _ in range(31 + margin):
                depart(sw, job3)  # departures from the port (any packets) advance its count
            sw.h.state.registers["port_qdepth"].write(first, 30)
            assert decide(sw, ethplus_frame(entropy=0x55, seq=4))[0] != first


def test_near_best_probed_hop_yields_to_local_load_plain_hula_does_not() -> None:
    for flags, slack in ((LBF_LOCAL_LOAD | LBF_NEAR_BEST | LBF_RANDOM_TIE, 2), (0, 0)):
        sw = leaf(5, flags, mode=LB_ADAPTIVE, near_slack=slack)
        assert sw.send(4, probe_frame(dst_index=7, qdepth=0)) == []  # port 4 is the probed best hop
        used = Counter(decide(sw, ethplus_frame(src_id=i, entropy=i * 31))[0] for i in range(8))
        if flags:
            assert used[4] < 8 and used[4] >= 2, used  # preferred by `slack`, not by everything
        else:
            assert used == Counter({4: 8}), used  # every decision onto the one probed port


def test_trace_records_choice_and_belief() -> None:
    sw = leaf(9, LBF_LOCAL_LOAD | LBF_RANDOM_TIE | LBF_TRACE, mode=LB_ADAPTIVE)  # no probe: least-loaded
    chosen = [decide(sw, ethplus_frame(src_id=i, entropy=i * 13))[0] for i in range(6)]
    assert sw.register("MyIngress.lb.lb_trace_next", 0) == 6
    entries = [decode(n, sw.register("MyIngress.lb.lb_trace", n)) for n in range(6)]
    assert [e.port for e in entries] == chosen
    assert [e.dst_index for e in entries] == [7] * 6
    assert [e.belief for e in entries] == [0, 0, 0, 0, 1, 1]  # the load it believed: its own earlier choices
    assert {e.kind for e in entries} == {"least-loaded"}
