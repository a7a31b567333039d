"""Per-port accounting: every received packet ends up forwarded, to-CPU or dropped (with a reason).

A packet may turn into several copies (multicast, clones); its fate is settled when the
last copy is done: forwarded if any copy left on a data port, else to-CPU if any copy
went to the CPU, else dropped for the reason of its last copy. So for every ingress port
`received == forwarded + to_cpu + dropped` once nothing is in flight.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Drop reasons, as reported in stats and docs/switch.md.
MALFORMED = "malformed"  # the pipeline could not process the frame (parser error, bad frame)
PIPELINE = "pipeline"  # the program dropped it (mark_to_drop, egress_spec 511, no copy made)
QUEUE_FULL = "queue_full"  # tail drop in the traffic manager
PORT_DOWN = "port_down"  # egress port's link is down or the interface is gone
NO_PORT = "no_port"  # egress port that the switch does not have
TX_ERROR = "tx_error"  # the kernel refused the frame
RX_RING = "rx_ring"  # lost in the port's receive ring before the switch read it (PACKET_STATISTICS)
# What the switch loop itself can decide (both clocks), then what only real sockets add.
LOOP_REASONS = (PIPELINE, MALFORMED, QUEUE_FULL, PORT_DOWN, NO_PORT)
REASONS = LOOP_REASONS + (TX_ERROR, RX_RING)


@dataclass
class PortStats:
    received: int = 0
    received_bytes: int = 0
    forwarded: int = 0
    to_cpu: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS, 0))
    transmitted: int = 0  # frames sent out of this port (all copies, egress side)
    transmitted_bytes: int = 0

    def as_dict(self) -> dict:
        return {
            "received": self.received,
            "received_bytes": self.received_bytes,
            "forwarded": self.forwarded,
            "to_cpu": self.to_cpu,
            "dropped": sum(self.dropped.values()),
            "dropped_by_reason": dict(self.dropped),
            "transmitted": self.transmitted,
            "transmitted_bytes": self.transmitted_bytes,
        }


class Fate:
    """What became of one received packet while its copies are in flight."""

    __slots__ = ("stats", "pending", "fwd", "cpu", "reason")

    def __init__(self, stats: PortStats, pending: int) -> None:
        self.stats = stats
        self.pending = pending
        self.fwd = False
        self.cpu = False
        self.reason = PIPELINE


class Accounting:
    """Counters of all ports plus the packets still in flight."""

    def __init__(self) -> None:
        self.ports: dict[int, PortStats] = {}
        self.in_flight = 0

    def port(self, num: int) -> PortStats:
        ps = self.ports.get(num)
        if ps is None:
            ps = self.ports[num] = PortStats()
        return ps

    def received(self, num: int, nbytes: int) -> PortStats:
        ps = self.ports.get(num) or self.port(num)
        ps.received += 1
        ps.received_bytes += nbytes
        return ps

    def dropped_now(self, ps: PortStats, reason: str) -> None:
        ps.dropped[reason] += 1

    def ring_dropped(self, num: int, count: int) -> None:
        """Frames the kernel took for port `num` but lost in its ring: received, and dropped there."""
        ps = self.ports.get(num) or self.port(num)
        ps.received += count
        ps.dropped[RX_RING] += count

    def start(self, ps: PortStats, copies: int) -> Fate:
        self.in_flight += 1
        return Fate(ps, copies)

    def copy_done(self, fate: Fate, fwd: int = 0, cpu: int = 0, reason: str | None = None) -> None:
        """One copy finished: it produced `fwd` frames on data ports and `cpu` to the CPU."""
        if fwd:
            fate.fwd = True
        if cpu:
            fate.cpu = True
        if reason is not None:
            fate.reason = reason
        fate.pending -= 1
        if fate.pending <= 0:
            self.in_flight -= 1
            ps = fate.stats
            if fate.fwd:
                ps.forwarded += 1
            elif fate.cpu:
                ps.to_cpu += 1
            else:
                ps.dropped[fate.reason] += 1

    def add_copies(self, fate: Fate, n: int) -> None:
        fate.pending += n

    def snapshot(self) -> dict:
        ports = {str(num): ps.as_dict() for num, ps in sorted(self.ports.items())}
        totals = PortStats()
        for ps in self.ports.values():
            totals.received += ps.received
            totals.received_bytes += ps.received_bytes
            totals.transmitted_bytes += ps.transmitted_bytes
            totals.forwarded += ps.forwarded
            totals.to_cpu += ps.to_cpu
            for r, c in ps.dropped.items():
                totals.dropped[r] += c
            totals.transmitted += ps.transmitted
        return {"ports": ports, "total": totals.as_dict(), "in_flight": self.in_flight}
