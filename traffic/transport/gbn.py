"""`rc-gbn`: a RoCEv2 Reliable-Connection-like transport — PSNs, coalesced ACKs, one NAK per gap, go-back-N.

Receiver: accepts only the expected PSN; anything later is discarded and answered (once per gap) with a NAK
carrying the expected PSN; an older PSN (a duplicate) is answered with an ACK at once, so a lost ACK is
repaired by the sender's next retransmission. In-order arrivals are acknowledged every `ack_every` packets
or `ack_delay_ns` after the first unacknowledged one. A trimmed packet (its payload cut by a full switch
queue) at or after the expected PSN is a loss made visible: NAK at once.

Sender: sends PSNs in order within a window; a NAK sends it back to the NAKed PSN (everything after it is
sent again, which is why reordering costs RC dearly); with no progress for `rto_ns` it goes back to the
oldest unacknowledged PSN, and after `max_timeouts` timeouts in a row it gives up (the flow fails).
"""

from __future__ import annotations

from traffic.transport.base import (
    ACK,
    CNP,
    NAK,
    CnpGenerator,
    Feedback,
    RttEstimator,
    SeenOnWire,
    TransportParams,
)

_NOTHING: list[Feedback] = []  # returned (never changed) when an arrival needs no feedback
_feedback = tuple.__new__  # a Feedback from all its fields: skips the named tuple's keyword-defaults __new__


class GbnSender:
    """`done` is kept as a plain attribute and `sent` derived (first sends are `high`), because the host asks
    and counts them for every packet."""

    __slots__ = ("npkts", "p", "window", "una", "nxt", "high", "rto_at", "streak", "rtt", "retransmitted",
                 "timeouts", "naks", "failed", "done")

    def __init__(self, npkts: int, params: TransportParams, rtt: RttEstimator | None = None) -> None:
        self.npkts = npkts
        self.p = params
        self.window = params.window  # read for every packet sent
        self.una = 0  # oldest unacknowledged PSN
        self.nxt = 0  # next PSN to send
        self.high = 0  # one past the highest PSN ever sent
        self.rto_at: int | None = None
        self.rtt = rtt or RttEstimator(params)
        self.streak = 0  # timeouts in a row without progress
        self.retransmitted = self.timeouts = self.naks = 0
        self.failed = False
        self.done = npkts <= 0  # every PSN acknowledged, or given up (set where una or failed change)

    @property
    def acked_delivered(self) -> int:
        return self.una

    @property
    def sent(self) -> int:
        """Packets handed out: each PSN once up to `high`, plus the retransmissions."""
        return self.high + self.retransmitted

    def take(self, now: int) -> int | None:
        psn = self.nxt
        if psn >= self.npkts or psn - self.una >= self.window or self.failed:
            return None
        self.nxt = psn + 1
        if psn < self.high:
            self.retransmitted += 1
        else:
            self.high = psn + 1
        if self.rto_at is None:
            self.rto_at = now + self.rtt.rto
        return psn

    def on_feedback(self, fb: Feedback, now: int) -> int:
        if fb.kind == CNP:
            return 0
        if fb.echo_ns:
            self.rtt.sample(now - fb.echo_ns)
        cum = fb.cum
        if cum > self.high:  # (min(), without a call: once per ACK)
            cum = self.high
        new = 0
        if cum > self.una:
            new = cum - self.una
            self.una = cum
            self.done = cum >= self.npkts
            self.streak = 0
            self.rto_at = now + self.rtt.rto if self.una < self.high else None
            if self.nxt < self.una:
                self.nxt = self.una
        if fb.kind == NAK and cum == self.una and cum < self.high:
            self.nxt = cum
            self.naks += 1
            self.rto_at = now + self.rtt.rto
        return new

    def next_timer(self) -> int | None:
        return self.rto_at

    def on_timer(self, now: int) -> None:
        if self.rto_at is None or now < self.rto_at:
            return
        if self.una >= self.high:
            self.rto_at = None
            return
        self.timeouts += 1
        self.streak += 1
        if self.streak > self.p.max_timeouts:
            self.failed = self.done = True
            self.rto_at = None
            return
        self.nxt = self.una
        self.rto_at = now + self.rtt.backoff(self.streak)


class GbnReceiver:
    """`arrivals` is derived: every whole arrival is either delivered (the expected PSN) or discarded, so the
    per-packet path counts one of the two, not both."""

    __slots__ = ("npkts", "p", "ack_every", "ack_delay_ns", "expected", "nak_sent", "unacked", "ack_due", "qmax",
                 "wire", "cnp", "delivered", "spurious", "discarded", "trimmed", "acks", "naks", "echo")

    def __init__(self, npkts: int, params: TransportParams) -> None:
        self.npkts = npkts
        self.p = params
        self.ack_every = params.ack_every  # both read for every arrival
        self.ack_delay_ns = params.ack_delay_ns
        self.expected = 0
        self.nak_sent = False  # a NAK for the current expected PSN is out
        self.unacked = 0
        self.ack_due: int | None = None
        self.qmax = -1
        self.wire = SeenOnWire(npkts)
        self.cnp = CnpGenerator(params.cnp_interval_ns)
        self.delivered = self.spurious = self.discarded = self.trimmed = 0
        self.acks = self.naks = 0
        self.echo = 0  # send time of the latest data packet, echoed in feedback

    @property
    def arrivals(self) -> int:
        """Whole data frames that arrived (duplicates and discarded ones too)."""
        return self.delivered + self.discarded

    @property
    def complete(self) -> bool:
        return self.expected >= self.npkts

    def _ack(self, psn: int) -> Feedback:
        fb = Feedback(ACK, self.expected, psn, 0, self.qmax, self.echo)
        self.unacked = 0
        self.ack_due = None
        self.qmax = -1
        self.acks += 1
        return fb

    def _nak(self) -> Feedback:
        self.nak_sent = True
        self.naks += 1
        self.unacked = 0
        self.ack_due = None
        return Feedback(NAK, self.expected, self.expected, 0, self.qmax, self.echo)

    def on_data(self, psn: int, now: int, trimmed: bool = False, ce: bool = False,
                qdepth: int = -1, tx_ns: int = 0) -> list[Feedback]:
        self.echo = tx_ns
        if psn == self.expected and not trimmed and not ce and psn < self.npkts:
            # the common case first: in order, unmarked, whole
            seen = self.wire.bits
            if seen[psn]:
                self.spurious += 1
            else:
                seen[psn] = 1
            self.expected = psn + 1
            self.delivered += 1
            self.nak_sent = False
            unacked = self.unacked + 1
            qmax = self.qmax
            if qdepth > qmax:
                self.qmax = qmax = qdepth
            if unacked >= self.ack_every or psn + 1 >= self.npkts:  # what _ack does, inlined (once per ACK)
                self.unacked = 0
                self.ack_due = None
                self.qmax = -1
                self.acks += 1
                return [_feedback(Feedback, (ACK, psn + 1, psn, 0, qmax, tx_ns))]
            self.unacked = unacked
            if self.ack_due is None:
                self.ack_due = now + self.ack_delay_ns
            return _NOTHING
        out: list[Feedback] = []
        if ce:
            c = self.cnp.on_ce(now, self.expected)
            if c is not None:
                out.append(c)
        if psn >= self.npkts or psn < 0:
            return out
        if trimmed:
            self.trimmed += 1
            if psn >= self.expected and not self.nak_sent:
                out.append(self._nak())
            return out
        if self.wire.arrive(psn):
            self.spurious += 1
        exp = self.expected
        if psn == exp:
            self.expected = exp + 1
            self.delivered += 1
            self.nak_sent = False
            self.unacked += 1
            if qdepth > self.qmax:
                self.qmax = qdepth
            if self.unacked >= self.ack_every or self.expected >= self.npkts:
                out.append(self._ack(psn))
            elif self.ack_due is None:
                self.ack_due = now + self.ack_delay_ns
        elif psn < exp:
            self.discarded += 1
            out.append(self._ack(psn))
        else:
            self.discarded += 1
            if not self.nak_sent:
                out.append(self._nak())
        return out

    def next_timer(self) -> int | None:
        return self.ack_due

    def on_timer(self, now: int) -> list[Feedback]:
        if self.ack_due is None or now < self.ack_due:
            return []
        return [self._ack(self.expected - 1)]
