"""The receiver's reorder accounting: how many packets a selective-repeat receiver had to hold above a missing
one (`reorder_buffer`), next to the count and distance of reordered packets.

Why: spraying's throughput is paid for at the receiver; the adaptive-routing comparison (docs/experiments.md)
reports this high-water mark per policy, so it must be exact on the wire paths (`on_wire`, reliable
transports) and the unreliable one (`on_packet`) alike.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from traffic.frames import Parsed
from traffic.receiver import FlowRx


def _arrive(order: list[int], npkts: int, wire: bool) -> FlowRx:
    rx = FlowRx(1, npkts)
    for t, seq in enumerate(order):
        p = Parsed(1, seq, npkts, 0, False, -1, 100)
        if wire:
            rx.on_wire(p)
        else:
            rx.on_packet(p, t)
    return rx


def _held_max(order: list[int], npkts: int) -> int:
    """The definition, spelled out: after each arrival, arrived packets above the first missing one."""
    got: set[int] = set()
    best = 0
    for seq in order:
        got.add(seq)
        first_missing = next(i for i in range(npkts + 1) if i not in got)
        best = max(best, sum(1 for s in got if s > first_missing))
    return best


def test_in_order_holds_nothing() -> None:
    for wire in (True, False):
        rx = _arrive(list(range(10)), 10, wire)
        assert rx.reorder_buffer == 0 and rx.reordered == 0 and rx.next_in_order == 10


def test_one_late_packet_holds_what_overtook_it() -> None:
    for wire in (True, False):
        rx = _arrive([0, 2, 3, 4, 1, 5], 6, wire)  # 1 arrives after 2, 3, 4
        assert rx.reorder_buffer == 3 and rx.reordered == 1 and rx.reorder_max == 3


def test_a_loss_holds_everything_after_it_until_repaired() -> None:
    for wire in (True, False):
        rx = _arrive([0, 1, 3, 4, 5, 2, 6], 7, wire)  # 2 lost, resent after 5
        assert rx.reorder_buffer == 3 and rx.held == 0


@settings(max_examples=200, deadline=None)
@given(st.permutations(list(range(12))), st.booleans())
def test_matches_the_definition(order: list[int], wire: bool) -> None:
    order = order + order[:3]  # some duplicates at the end
    assert _arrive(order, 12, wire).reorder_buffer == _held_max(order, 12)
