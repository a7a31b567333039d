"""Per-flow receive accounting: delivered, lost, reordered (with distance), duplicates, ECN-CE marks (under a
reliable transport only the wire statistics: its receiver counts delivery, see `FlowRx.on_wire`).

Sequence numbers are per flow and start at 0; a flow knows its packet count from the probe record, so a
bitmap tells duplicates from first arrivals and what never arrived is loss. A packet is reordered when a
higher sequence number arrived before it; its reorder distance is how far behind the highest one it was.
The reorder buffer is what a selective-repeat receiver has to hold: packets that arrived above the first one
still missing; `reorder_buffer` is its high-water mark (what spraying costs the receiver in memory).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from traffic.frames import Parsed


@dataclass
class FlowRx:
    flow: int
    npkts: int
    seen: bytearray = field(repr=False, default_factory=bytearray)
    delivered: int = 0
    bytes: int = 0
    duplicates: int = 0
    reordered: int = 0
    reorder_max: int = 0
    reorder_sum: int = 0
    ce: int = 0
    max_seq: int = -1
    next_in_order: int = 0  # the first sequence number not yet arrived
    held: int = 0  # arrived above next_in_order: what a selective-repeat receiver buffers now
    reorder_buffer: int = 0  # the most it ever held
    qdepth_max: int = -1
    first_ns: int = 0
    last_ns: int = 0
    complete_ns: int = 0  # arrival time of the last missing packet; 0 while incomplete

    def __post_init__(self) -> None:
        if not self.seen:
            self.seen = bytearray(self.npkts)

    @property
    def complete(self) -> bool:
        return self.delivered == self.npkts

    @property
    def lost(self) -> int:
        return self.npkts - self.delivered

    def on_wire(self, p: Parsed) -> None:
        """Account one arrival's wire statistics only (reordering, duplicates, ECN-CE marks, queue depth), for a
        flow whose delivery a reliable transport's receiver counts: that receiver is the one delivery
        bookkeeping, so `delivered`, `bytes` and the arrival times stay 0 here."""
        seq = p.seq
        if seq == self.next_in_order and not self.held and seq < self.npkts and not p.ce \
                and p.qdepth <= self.qdepth_max:
            # the common case: the next one in order, nothing held, unmarked; so it is new
            self.seen[seq] = 1
            self.max_seq = seq
            self.next_in_order = seq + 1
            return
        if seq >= self.npkts or self.seen[seq]:
            self.duplicates += 1
            return
        self.seen[seq] = 1
        if p.ce:
            self.ce += 1
        if p.qdepth > self.qdepth_max:
            self.qdepth_max = p.qdepth
        if seq < self.max_seq:
            dist = self.max_seq - seq
            self.reordered += 1
            self.reorder_sum += dist
            if dist > self.reorder_max:
                self.reorder_max = dist
        else:
            self.max_seq = seq
        self._advance(seq)

    def _advance(self, seq: int) -> None:
        """A new arrival `seq` (already marked seen): move the in-order point and track what is held."""
        if seq < self.next_in_order:
            return
        self.held += 1
        seen, n, i = self.seen, self.npkts, self.next_in_order
        while i < n and seen[i]:
            i += 1
        self.held -= i - self.next_in_order
        self.next_in_order = i
        if self.held > self.reorder_buffer:
            self.reorder_buffer = self.held

    def on_packet(self, p: Parsed, now_ns: int) -> bool:
        """Account one arrival; True when it was new (not a duplicate)."""
        seq = p.seq
        if seq == self.next_in_order and not self.held and seq < self.npkts - 1 and self.delivered and not p.ce \
                and p.qdepth <= self.qdepth_max:
            # the common case: the next one in order, nothing held, unmarked, neither the first nor the last
            # packet; so it is new and changes only these
            self.seen[seq] = 1
            self.max_seq = seq
            self.next_in_order = seq + 1
            self.delivered += 1
            self.bytes += p.length
            self.last_ns = now_ns
            return True
        if seq >= self.npkts or self.seen[seq]:
            self.duplicates += 1
            return False
        self.seen[seq] = 1
        self.delivered += 1
        self.bytes += p.length
        if self.delivered == 1:
            self.first_ns = now_ns
        self.last_ns = now_ns
        if p.ce:
            self.ce += 1
        if p.qdepth > self.qdepth_max:
            self.qdepth_max = p.qdepth
        if seq < self.max_seq:
            dist = self.max_seq - seq
            self.reordered += 1
            self.reorder_sum += dist
            if dist > self.reorder_max:
                self.reorder_max = dist
        else:
            self.max_seq = seq
        self._advance(seq)
        if self.delivered == self.npkts:
            self.complete_ns = now_ns
        return True


@dataclass
class RxAccounting:
    """Receive accounting of all flows seen by one host model; frames for flows it does not know are counted and ignored."""

    flows: dict[int, FlowRx] = field(default_factory=dict)
    foreign: int = 0

    def expect(self, flow: int, npkts: int) -> FlowRx:
        rx = self.flows.get(flow)
        if rx is None:
            rx = self.flows[flow] = FlowRx(flow, npkts)
        return rx

    def on_frame(self, p: Parsed, now_ns: int) -> FlowRx | None:
        rx = self.flows.get(p.flow)
        if rx is None or rx.npkts != p.npkts:
            self.foreign += 1
            return None
        rx.on_packet(p, now_ns)
        return rx
