"""Endpoint transports as clock-free state machines (see `base`): `rc-gbn`, `sr` and `none`.

    sender, receiver = make_transport("rc-gbn", npkts, TransportParams())

The congestion reactions (`traffic.reaction`) are separate and combine with any transport: the engine feeds
them from the feedback frames (CNPs for DCQCN, the queue depth echoed in ACKs for HPCC).
"""

from __future__ import annotations

from traffic.transport.base import ACK, CNP, NAK, Feedback, Receiver, RttEstimator, Sender, TransportParams
from traffic.transport.gbn import GbnReceiver, GbnSender
from traffic.transport.none import UnreliableReceiver, UnreliableSender
from traffic.transport.sr import SrReceiver, SrSender

__all__ = ["ACK", "CNP", "NAK", "TRANSPORTS", "Feedback", "Receiver", "RttEstimator", "Sender", "TransportParams",
           "make_transport", "transport_params", "reliable"]

#: name -> (sender class, receiver class, description)
TRANSPORTS = {
    "none": (UnreliableSender, UnreliableReceiver, "unreliable: no ACKs, losses only counted"),
    "rc-gbn": (GbnSender, GbnReceiver, "RoCEv2-RC-like: ACK/NAK, go-back-N, timeout"),
    "sr": (SrSender, SrReceiver, "selective repeat with SACK (UEC RUD-like), reorder-tolerant"),
}


def reliable(name: str) -> bool:
    return name != "none"


def check_name(name: str) -> str:
    if name not in TRANSPORTS:
        raise ValueError(f"unknown transport {name!r}; known: {', '.join(TRANSPORTS)}")
    return name


def transport_params(**params: object) -> TransportParams:
    """TransportParams from user-given keys (seconds accepted as `*_s`), with a clear error for unknown ones."""
    known = {f for f in TransportParams.__dataclass_fields__}
    out: dict[str, int] = {}
    for key, value in params.items():
        name = key[:-2] + "_ns" if key.endswith("_s") else key
        if name not in known:
            raise ValueError(f"unknown transport parameter {key!r}; known: {', '.join(sorted(known))} "
                             "(times also as *_s in seconds)")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
            raise ValueError(f"transport parameter {key} must be a non-negative number, got {value!r}")
        out[name] = int(value * 1e9) if key.endswith("_s") else int(value)
    return TransportParams(**out)


def make_transport(name: str, npkts: int, params: TransportParams | None = None,
                   rtt: RttEstimator | None = None) -> tuple[Sender, Receiver]:
    """A sender/receiver pair for one flow of `npkts` packets; `rtt`: an estimator shared with other flows
    between the same endpoints (a new one when omitted)."""
    snd, rcv, _ = TRANSPORTS[check_name(name)]
    p = params or TransportParams()
    return snd(npkts, p, rtt), rcv(npkts, p)
