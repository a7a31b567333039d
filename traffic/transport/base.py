"""What every transport shares: the feedback a receiver sends back, the knobs, and the sender/receiver seams.

Transports are clock-free state machines. Every method that depends on time takes `now` (integer
nanoseconds, any epoch) and nothing inside reads a clock or touches a socket: the caller (the emulated
replay engine, or a virtual-time fabric) asks a sender which PSN to put on the wire next, hands feedback
frames to it, and asks when its next timer is due. A receiver is told about each data arrival and answers
with the feedback to send (an ACK, a NAK or a CNP), or nothing.

PSNs are per flow and count packets from 0 to `npkts - 1` (no wrap-around: a flow's packet count is known).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

#: Feedback kinds (on the wire in the feedback record's `kind` byte).
ACK = 1  # cumulative acknowledgement (+ SACK bitmap for selective repeat)
NAK = 2  # the receiver saw a gap (go-back-N) or a trimmed packet: resend from / this PSN
CNP = 3  # congestion notification: the receiver saw ECN-CE (DCQCN's reverse signal)

KIND_NAMES = {ACK: "ack", NAK: "nak", CNP: "cnp"}

SACK_BITS = 64  # bits of the SACK bitmap: PSNs cum+1 .. cum+64


class Feedback(NamedTuple):
    """One feedback frame from a flow's receiver to its sender (immutable; a named tuple because one is made
    for every ACK at both ends and a frozen dataclass costs as much to build as parsing a whole data frame).

    `cum`: every PSN below it was delivered (the next PSN the receiver expects). `psn`: for a NAK, the PSN
    to resend (go-back-N: == cum; selective repeat: the trimmed PSN); for an ACK, the PSN whose arrival
    triggered it. `sack`: bit i set = PSN cum+1+i was delivered (selective repeat only). `qdepth`: the
    largest path queue depth seen by the acknowledged packets (ETH+; -1 when unknown), for HPCC. `echo_ns`:
    the send time stamped in the data packet that triggered it (0: none), so the sender measures the RTT.
    """

    kind: int
    cum: int
    psn: int = 0
    sack: int = 0
    qdepth: int = -1
    echo_ns: int = 0


@dataclass(frozen=True)
class TransportParams:
    """Knobs shared by the reliable transports. Times in nanoseconds.

    ack_every: coalesce this many in-order arrivals into one ACK; ack_delay_ns: an ACK is sent at the latest
    this long after the first unacknowledged arrival; rto_ns: retransmission timeout (no progress for this
    long: go back to the oldest unacknowledged PSN); max_timeouts: consecutive timeouts before the sender
    gives up (RoCE's retry_cnt); window: packets in flight at most; reorder_ns (selective repeat): a packet
    is declared lost when one sent this much later has been acknowledged (RACK-like; the window is at least
    half the smoothed RTT, so spraying over paths of unequal queueing is tolerated); cnp_interval_ns: at
    most one CNP per flow this often.
    """

    ack_every: int = 8
    ack_delay_ns: int = 200_000
    rto_ns: int = 100_000_000
    rto_init_ns: int = 1_000_000_000
    rto_max_ns: int = 0  # 0: the larger of 64 x rto_ns and 4 x rto_init_ns
    max_timeouts: int = 7
    window: int = 256
    reorder_ns: int = 2_000_000
    cnp_interval_ns: int = 50_000

    def __post_init__(self) -> None:
        for name in ("ack_every", "ack_delay_ns", "rto_ns", "rto_init_ns", "max_timeouts", "window", "reorder_ns"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"transport parameter {name} must be at least 1, got {getattr(self, name)}")
        if self.ack_delay_ns >= self.rto_ns:
            raise ValueError(f"ack_delay_ns ({self.ack_delay_ns}) must be below rto_ns ({self.rto_ns}): "
                             "a delayed ACK would otherwise always come after the retransmission timeout")
        if self.rto_max_ns and self.rto_max_ns < max(self.rto_ns, self.rto_init_ns):
            raise ValueError(f"rto_max_ns ({self.rto_max_ns}) must not be below rto_ns and rto_init_ns")
        if self.cnp_interval_ns < 0:
            raise ValueError("transport parameter cnp_interval_ns must not be negative")


class Sender(Protocol):
    """The sending half of one flow."""

    npkts: int
    sent: int  # packets handed out (first transmissions + retransmissions)
    retransmitted: int
    timeouts: int
    naks: int  # NAKs that made the sender resend
    failed: bool  # gave up after max_timeouts
    acked_delivered: int  # PSNs the receiver has confirmed
    rtt: RttEstimator  # the RTT estimate its timeout comes from (shared per endpoint pair)

    @property
    def done(self) -> bool: ...  # every PSN acknowledged, or given up

    def take(self, now: int) -> int | None:
        """The PSN to transmit now (first time or again), or None when nothing may be sent now."""
        ...

    def on_feedback(self, fb: Feedback, now: int) -> int:
        """Apply an ACK or NAK; returns how many PSNs it newly acknowledged."""
        ...

    def next_timer(self) -> int | None:
        """When `on_timer` must be called next (None: no timer armed)."""
        ...

    def on_timer(self, now: int) -> None: ...


class Receiver(Protocol):
    """The receiving half of one flow."""

    npkts: int
    delivered: int  # distinct PSNs handed to the application (each exactly once)
    arrivals: int  # data frames that arrived (incl. duplicates, discarded out-of-order ones)
    spurious: int  # arrivals of a PSN whose earlier copy had already arrived: needless retransmissions
    discarded: int  # arrivals thrown away (go-back-N drops out-of-order packets)
    trimmed: int  # trimmed (header-only) arrivals

    @property
    def complete(self) -> bool: ...

    def on_data(self, psn: int, now: int, trimmed: bool = False, ce: bool = False,
                qdepth: int = -1, tx_ns: int = 0) -> list[Feedback]:
        """Account one arriving data frame (`tx_ns`: the send time it carries, echoed back for RTT
        measurement); returns the feedback to send back at once."""
        ...

    def next_timer(self) -> int | None: ...

    def on_timer(self, now: int) -> list[Feedback]: ...


class RttEstimator:
    """Smoothed RTT and the retransmission timeout derived from it (RFC 6298: alpha 1/8, beta 1/4)."""

    __slots__ = ("srtt", "rttvar", "rto", "rto_min", "rto_max", "samples")

    def __init__(self, params: TransportParams) -> None:
        self.srtt = 0
        self.rttvar = 0
        self.rto_min = params.rto_ns
        self.rto_max = params.rto_max_ns or max(64 * params.rto_ns, 4 * params.rto_init_ns)
        self.rto = max(params.rto_ns, params.rto_init_ns)
        self.samples = 0

    def sample(self, rtt_ns: int) -> None:
        if rtt_ns <= 0:
            return
        if not self.samples:
            self.srtt, self.rttvar = rtt_ns, rtt_ns // 2
        else:  # (comparisons, not abs/min/max calls: once per ACK)
            err = self.srtt - rtt_ns
            self.rttvar += ((err if err >= 0 else -err) - self.rttvar) // 4
            self.srtt += -err // 8
        self.samples += 1
        rto = self.srtt + 4 * self.rttvar
        self.rto = self.rto_min if rto < self.rto_min else self.rto_max if rto > self.rto_max else rto

    def backoff(self, streak: int) -> int:
        """The timeout after `streak` timeouts in a row."""
        return min(self.rto_max, self.rto << min(streak, 20))


class CnpGenerator:
    """At most one CNP per `interval_ns` per flow when ECN-CE arrives (what a RoCE NIC's notification point
    does); shared by the receivers."""

    __slots__ = ("interval_ns", "last_ns", "sent")

    def __init__(self, interval_ns: int) -> None:
        self.interval_ns = interval_ns
        self.last_ns = -1
        self.sent = 0

    def on_ce(self, now: int, cum: int) -> Feedback | None:
        if self.last_ns >= 0 and now - self.last_ns < self.interval_ns:
            return None
        self.last_ns = now
        self.sent += 1
        return Feedback(CNP, cum)


class SeenOnWire:
    """Which PSNs arrived at least once (whether kept or discarded): a second arrival of one is a spurious
    retransmission — its first copy made it, so resending it was not needed to repair a loss."""

    __slots__ = ("bits",)

    def __init__(self, npkts: int) -> None:
        self.bits = bytearray(npkts)

    def arrive(self, psn: int) -> bool:
        """True when this PSN had arrived before."""
        if self.bits[psn]:
            return True
        self.bits[psn] = 1
        return False
