"""Per-port link-layer counters. The LLR names follow the SAI/SONiC LLR work where it has one (tx ok, rx ok,
rx bad, rx missing seq, rx duplicate seq, tx replay, tx discard); the rest say what they count."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass


@dataclass
class LinkCounters:
    rx_bad: int = 0                # frames that failed their FCS at this port (dropped before anything saw them)
    llr_tx_ok: int = 0             # LLR-eligible frames sent for the first time (sequence number taken)
    llr_tx_best_effort: int = 0    # frames sent without a sequence number because the replay buffer was full
    llr_replays: int = 0           # go-back-N replays started (after a NAK or on the replay timer)
    llr_tx_replay: int = 0         # frames sent again by those replays
    llr_tx_discard: int = 0        # frames dropped after more than max_replays replays
    llr_tx_ack: int = 0
    llr_tx_nak: int = 0
    llr_rx_ok: int = 0             # frames accepted in sequence
    llr_rx_missing_seq: int = 0    # sequence gaps seen (each answered by a NAK)
    llr_rx_out_of_seq: int = 0     # frames after a gap, dropped while the replay comes
    llr_rx_duplicate_seq: int = 0  # frames already received (a replay of what got through), dropped
    llr_rx_ack: int = 0
    llr_rx_nak: int = 0
    llr_replay_timeouts: int = 0   # replays started by the replay timer (nothing came back in time)
    pause_tx: int = 0              # PFC pause frames sent (part of control_tx)
    paused_ns: int = 0             # time a priority of this port's transmit side was held by PFC (summed)
    credit_stall_ns: int = 0       # time a VC of this port's transmit side waited for CBFC credits (summed)
    tx_refused: int = 0            # the port's own frames (control, replay) the wire refused (a full socket)
    control_tx: int = 0            # link control frames of flow control sent (PFC pause, CBFC credit update)
    control_rx: int = 0            # ... and received
    buffer_drops: int = 0          # frames this port's ingress buffer refused (PFC: beyond XOFF + headroom)
    watchdog_storms: int = 0       # priorities of this port's transmit side the PFC watchdog found stuck and let go

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def add(self, other: LinkCounters) -> None:
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)


COUNTER_NAMES = tuple(LinkCounters().as_dict())


def run_totals(counters: Iterable[LinkCounters], buffer_drops: int = 0) -> dict[str, int]:
    """The run's link-layer totals (metrics.json and summary.json `link_layer`), from every port's counters
    (`buffer_drops`: drops counted elsewhere, added to the ports' own)."""
    t = LinkCounters()
    for c in counters:
        t.add(c)
    return {"frames_corrupted": t.rx_bad, "llr_replays": t.llr_replays, "llr_replayed_frames": t.llr_tx_replay,
            "llr_discards": t.llr_tx_discard, "llr_best_effort": t.llr_tx_best_effort,
            "llr_acks": t.llr_tx_ack, "llr_naks": t.llr_tx_nak, "pause_frames": t.pause_tx,
            "paused_ns": t.paused_ns, "credit_stall_ns": t.credit_stall_ns,
            "buffer_drops": t.buffer_drops + buffer_drops, "watchdog_storms": t.watchdog_storms}
