"""`sr`: selective repeat with SACK bitmaps, in the spirit of Ultra Ethernet's RUD (reliable, unordered
delivery): every arriving PSN is delivered once, in any order, so per-packet spraying costs nothing.

Receiver: keeps a bitmap of delivered PSNs; acknowledges every `ack_every` new arrivals (or `ack_delay_ns`
after the first unacknowledged one) with the cumulative PSN, the PSN that triggered the ACK and a 64-bit
SACK bitmap of what arrived beyond it; a duplicate is answered at once; a trimmed packet is NAKed at once
with its own PSN (only that one is resent).

Sender: resends only what is missing. A PSN is declared lost (RACK-like, time-based so reordering up to
`reorder_ns` is tolerated) when a packet sent at least `reorder_ns` after it has been acknowledged, when it
is NAKed after trimming, when a tail-loss probe (the highest unacknowledged PSN, resent after two smoothed
RTTs of silence once everything was sent) brings back a SACK that shows the hole, or when nothing progressed
for the RTO (then every PSN outstanding for that long is resent); `max_timeouts` timeouts in a row and it gives
up.
"""

from __future__ import annotations

from collections import deque

from traffic.transport.base import (
    ACK,
    CNP,
    NAK,
    SACK_BITS,
    CnpGenerator,
    Feedback,
    RttEstimator,
    TransportParams,
)

_BIT_DIGITS = bytes.maketrans(b"\x00\x01", b"01")
_NOTHING: list[Feedback] = []  # returned (never changed) when an arrival needs no feedback


class SrSender:
    __slots__ = ("npkts", "p", "acked", "queued", "sent_ns", "una", "nxt", "high", "nacked", "rack", "retx",
                 "rto_at", "probe_at", "last_tx", "probes", "streak", "rtt", "sent", "retransmitted", "timeouts", "naks", "failed",
                 "done")

    def __init__(self, npkts: int, params: TransportParams, rtt: RttEstimator | None = None) -> None:
        self.npkts = npkts
        self.p = params
        self.acked = bytearray(npkts)
        self.queued = bytearray(npkts)  # waiting in `retx`
        self.sent_ns = [0] * npkts  # last transmission time per PSN
        self.una = self.nxt = self.high = 0
        self.nacked = 0  # PSNs acknowledged
        self.rack = -1  # latest send time among acknowledged packets
        self.retx: deque[int] = deque()
        self.rto_at: int | None = None
        self.probe_at: int | None = None  # tail-loss probe, armed when everything has been sent once
        self.last_tx = 0
        self.probes = 0
        self.rtt = rtt or RttEstimator(params)
        self.streak = 0
        self.sent = self.retransmitted = self.timeouts = self.naks = 0
        self.failed = False
        # every PSN acknowledged, or given up: an attribute set where `nacked` or `failed` change (read per frame)
        self.done = npkts <= 0

    @property
    def acked_delivered(self) -> int:
        return self.nacked

    def take(self, now: int) -> int | None:
        if self.failed:
            return None
        retx = self.retx
        while retx:
            psn = retx.popleft()
            self.queued[psn] = 0
            if not self.acked[psn]:
                self.sent_ns[psn] = now
                self.retransmitted += 1
                self.sent += 1
                if self.rto_at is None:
                    self.rto_at = now + self.rtt.rto
                self._arm_probe(now)
                return psn
        psn = self.nxt
        if psn >= self.npkts or psn - self.una >= self.p.window:
            return None
        self.nxt = self.high = psn + 1
        self.sent_ns[psn] = now
        self.sent += 1
        if self.rto_at is None:
            self.rto_at = now + self.rtt.rto
        self._arm_probe(now)
        return psn

    def _pto(self) -> int:
        """Probe timeout: two smoothed RTTs, or the RTT's spread when that is wider, plus the ACK delay."""
        rtt = self.rtt
        return max(2 * rtt.srtt, rtt.srtt + 4 * rtt.rttvar) + self.p.ack_delay_ns

    def _arm_probe(self, now: int) -> None:
        """Tail-loss probe: a lost last packet has no later packet whose ACK would reveal it, so when all
        has been sent, resend the highest unacknowledged PSN after two smoothed RTTs of silence (its SACK then
        shows any other hole) instead of waiting for the RTO."""
        self.last_tx = now
        if self.high >= self.npkts and self.rtt.samples:
            self.probe_at = now + self._pto()

    def _ack(self, psn: int) -> bool:
        if psn >= self.high or self.acked[psn]:
            return False
        self.acked[psn] = 1
        self.nacked += 1
        t = self.sent_ns[psn]
        if t > self.rack:
            self.rack = t
        return True

    def _queue(self, psn: int) -> None:
        if not self.acked[psn] and not self.queued[psn]:
            self.queued[psn] = 1
            self.retx.append(psn)

    def on_feedback(self, fb: Feedback, now: int) -> int:
        if fb.kind == CNP:
            return 0
        if fb.echo_ns:
            self.rtt.sample(now - fb.echo_ns)
        before = self.nacked
        acked = self.acked
        high = self.high
        cum = fb.cum
        if cum > self.una:  # `_ack` of every PSN below cum, inlined (once per ACK, ack_every PSNs)
            sent_ns = self.sent_ns
            rack = self.rack
            nacked = before
            for psn in range(self.una, cum if cum < high else high):
                if not acked[psn]:
                    acked[psn] = 1
                    nacked += 1
                    t = sent_ns[psn]
                    if t > rack:
                        rack = t
            self.nacked = nacked
            self.rack = rack
        bits, psn = fb.sack, cum + 1
        while bits:
            if bits & 1:
                self._ack(psn)
            bits >>= 1
            psn += 1
        if fb.kind == ACK and 0 <= fb.psn:
            self._ack(fb.psn)
        elif fb.kind == NAK and 0 <= fb.psn < high:
            self.naks += 1
            self._queue(fb.psn)
        una = self.una
        while una < self.high and acked[una]:
            una += 1
        self.una = una
        new = self.nacked - before
        if new:
            if self.nacked >= self.npkts:
                self.done = True
            self.streak = 0
            self.rto_at = now + self.rtt.rto if self.nacked < self.high else None
            if self.probe_at is not None:
                self.probe_at = now + self._pto()
            # RACK: anything sent reorder_ns before an acknowledged packet and still unacknowledged is lost
            limit = self.rack - max(self.p.reorder_ns, self.rtt.srtt // 2)
            if limit >= 0:
                sent_ns, queued = self.sent_ns, self.queued
                for psn in range(una, self.high):
                    if not acked[psn] and not queued[psn] and sent_ns[psn] <= limit:
                        self._queue(psn)
        return new

    def next_timer(self) -> int | None:
        if self.probe_at is not None and (self.rto_at is None or self.probe_at < self.rto_at):
            return self.probe_at
        return self.rto_at

    def on_timer(self, now: int) -> None:
        if self.probe_at is not None and now >= self.probe_at:
            self.probe_at = None
            if self.nacked < self.npkts and not self.retx:
                psn = self.high - 1
                while psn >= self.una and self.acked[psn]:
                    psn -= 1
                if psn >= self.una:
                    self.probes += 1
                    self._queue(psn)
        if self.rto_at is None or now < self.rto_at:
            return
        if self.nacked >= self.high:
            self.rto_at = None
            return
        self.timeouts += 1
        self.streak += 1
        if self.streak > self.p.max_timeouts:
            self.failed = self.done = True
            self.rto_at = None
            return
        old = now - self.rtt.rto
        for psn in range(self.una, self.high):
            if not self.acked[psn] and (psn == self.una or self.sent_ns[psn] <= old):
                self._queue(psn)
        self.rto_at = now + self.rtt.backoff(self.streak)


class SrReceiver:
    """Every whole arrival of a new PSN is delivered, so the PSNs seen on the wire are the delivered ones
    (`got`): a second arrival of one is both discarded and spurious, and no separate record of arrivals is
    kept (`SeenOnWire`, which go-back-N needs because it throws away PSNs that did arrive)."""

    __slots__ = ("npkts", "p", "ack_every", "ack_delay_ns", "got", "cum", "unacked", "ack_due", "last", "qmax",
                 "cnp", "delivered", "arrivals", "discarded", "trimmed", "acks", "naks", "echo")

    def __init__(self, npkts: int, params: TransportParams) -> None:
        self.npkts = npkts
        self.p = params
        self.ack_every = params.ack_every  # both read for every arrival
        self.ack_delay_ns = params.ack_delay_ns
        self.got = bytearray(npkts)
        self.cum = 0
        self.unacked = 0
        self.ack_due: int | None = None
        self.last = 0
        self.qmax = -1
        self.cnp = CnpGenerator(params.cnp_interval_ns)
        self.delivered = self.arrivals = self.discarded = self.trimmed = 0
        self.acks = self.naks = 0
        self.echo = 0  # send time of the latest data packet, echoed in feedback

    @property
    def spurious(self) -> int:
        """Arrivals of a PSN that had arrived before: exactly the discarded ones (see the class)."""
        return self.discarded

    @property
    def complete(self) -> bool:
        return self.delivered >= self.npkts

    def sack(self) -> int:
        """Bit i: PSN cum+1+i has arrived."""
        start = self.cum + 1
        digits = self.got[start:start + SACK_BITS][::-1].translate(_BIT_DIGITS)
        return int(digits, 2) if digits else 0

    def _ack(self, psn: int) -> Feedback:
        fb = Feedback(ACK, self.cum, psn, self.sack(), self.qmax, self.echo)
        self.unacked = 0
        self.ack_due = None
        self.qmax = -1
        self.acks += 1
        return fb

    def on_data(self, psn: int, now: int, trimmed: bool = False, ce: bool = False,
                qdepth: int = -1, tx_ns: int = 0) -> list[Feedback]:
        self.echo = tx_ns
        got = self.got
        npkts = self.npkts
        out = _NOTHING
        if trimmed or ce or not 0 <= psn < npkts or got[psn]:
            # the uncommon cases: a CNP to send, a PSN out of range, a trimmed header, a duplicate
            out = []
            if ce:
                c = self.cnp.on_ce(now, self.cum)
                if c is not None:
                    out.append(c)
            if psn >= npkts or psn < 0:
                return out
            if trimmed:
                self.trimmed += 1
                if not got[psn]:
                    self.naks += 1
                    out.append(Feedback(NAK, self.cum, psn, self.sack(), self.qmax, tx_ns))
                return out
            if got[psn]:
                self.arrivals += 1
                self.discarded += 1
                out.append(self._ack(psn))
                return out
        # a new PSN, whole (ECN-marked or not): delivered
        self.arrivals += 1
        got[psn] = 1
        self.delivered += 1
        cum = self.cum
        if psn == cum:
            cum += 1
            while cum < npkts and got[cum]:
                cum += 1
            self.cum = cum
        unacked = self.unacked + 1
        if qdepth > self.qmax:
            self.qmax = qdepth
        self.last = psn
        if unacked >= self.ack_every or self.delivered >= npkts:
            if out is _NOTHING:
                return [self._ack(psn)]
            out.append(self._ack(psn))
            return out
        self.unacked = unacked
        if self.ack_due is None:
            self.ack_due = now + self.ack_delay_ns
        return out

    def next_timer(self) -> int | None:
        return self.ack_due

    def on_timer(self, now: int) -> list[Feedback]:
        if self.ack_due is None or now < self.ack_due:
            return []
        return [self._ack(self.last)]
