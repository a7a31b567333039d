"""`none`: unreliable — every PSN is sent once and never acknowledged (ethlab's original behaviour). A lost
packet is only counted; the flow is settled as lossy a grace period after its last packet was sent. Kept
for comparison: a lossy run under `none` ends *earlier*, which is not what a real job would see."""

from __future__ import annotations

from traffic.transport.base import Feedback, RttEstimator, SeenOnWire, TransportParams


class UnreliableSender:
    __slots__ = ("npkts", "nxt", "retransmitted", "timeouts", "naks", "failed", "rtt", "done")

    def __init__(self, npkts: int, params: TransportParams | None = None, rtt: RttEstimator | None = None) -> None:
        self.npkts = npkts
        self.rtt = rtt or RttEstimator(params or TransportParams())  # never sampled: nothing is acknowledged
        self.nxt = 0  # the next PSN; every one below was sent once (`sent`)
        self.retransmitted = self.timeouts = self.naks = 0
        self.failed = False
        self.done = npkts <= 0  # every PSN sent (an attribute, set where `nxt` moves: read twice per frame)

    @property
    def acked_delivered(self) -> int:
        return 0

    @property
    def sent(self) -> int:
        return self.nxt  # each PSN is handed out once

    def take(self, now: int) -> int | None:
        psn = self.nxt
        if psn >= self.npkts:
            return None
        self.nxt = nxt = psn + 1
        if nxt >= self.npkts:
            self.done = True
        return psn

    def on_feedback(self, fb: Feedback, now: int) -> int:
        return 0

    def next_timer(self) -> int | None:
        return None

    def on_timer(self, now: int) -> None:
        return None


class UnreliableReceiver:
    __slots__ = ("npkts", "got", "wire", "delivered", "arrivals", "spurious", "discarded", "trimmed",
                 "acks", "naks")

    def __init__(self, npkts: int, params: TransportParams | None = None) -> None:
        self.npkts = npkts
        self.got = bytearray(npkts)
        self.wire = SeenOnWire(npkts)
        self.delivered = self.arrivals = self.spurious = self.discarded = self.trimmed = 0
        self.acks = self.naks = 0

    @property
    def complete(self) -> bool:
        return self.delivered >= self.npkts

    def on_data(self, psn: int, now: int, trimmed: bool = False, ce: bool = False,
                qdepth: int = -1, tx_ns: int = 0) -> list[Feedback]:
        if psn >= self.npkts or psn < 0:
            return []
        if trimmed:
            self.trimmed += 1
            return []
        self.arrivals += 1
        if self.got[psn]:
            self.discarded += 1
            return []
        self.got[psn] = 1
        self.delivered += 1
        return []

    def next_timer(self) -> int | None:
        return None

    def on_timer(self, now: int) -> list[Feedback]:
        return []
