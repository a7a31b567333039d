"""Links: a nominal rate, a one-way propagation delay, up/down state, per-direction counters.

A frame that starts serialising at t arrives (last bit) at t + wire_bytes × 8 / rate + delay, where
wire_bytes adds Ethernet's per-frame cost on the wire that no frame buffer carries: preamble + SFD (8 B),
FCS (4 B) and the inter-frame gap (12 B). The sender (switch traffic manager or host NIC) is what keeps
frames from overlapping: it holds its port for the serialisation time. A frame in flight when the link goes
down is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from math import floor
from typing import Any

from traffic.scheduler import SCHEDULER_PLACES
from vfabric.events import SimError, Simulator

WIRE_OVERHEAD = 8 + 4 + 12  # preamble+SFD, FCS, inter-frame gap (bytes)
SOURCE_SHIFT = 40  # a channel's places are (source << SOURCE_SHIFT) + its own sequence: see `Channel`
MAX_SOURCES = SCHEDULER_PLACES >> SOURCE_SHIFT  # above: the scheduler's own places (traffic/scheduler.py)




def wire_bytes(frame_len: int) -> int:
    """Bytes a frame occupies on the wire (frames shorter than 60 B are padded to the 64-B minimum)."""
    return max(frame_len, 60) + WIRE_OVERHEAD


class Link:
    """Both directions of one cable; `ends[i]` is (receiver callback, port) of the far side of direction i."""

    __slots__ = ("name", "rate_bps", "delay_ns", "up", "ns_per_byte", "sim", "lost", "index")

    def __init__(self, sim: Simulator, name: str, rate_bps: float, delay_ns: int, index: int = -1) -> None:
        if not rate_bps or rate_bps <= 0:
            raise SimError(f"link {name}: rate must be > 0 bit/s (got {rate_bps!r})")
        if delay_ns < 0:
            raise SimError(f"link {name}: negative propagation delay {delay_ns} ns")
        self.sim = sim
        self.name = name
        self.index = index
        self.rate_bps = float(rate_bps)
        self.delay_ns = int(delay_ns)
        self.up = True
        self.ns_per_byte = 8e9 / self.rate_bps
        self.lost = 0  # frames that met a down link

    def serialisation_ns(self, frame_len: int) -> float:
        return wire_bytes(frame_len) * self.ns_per_byte


class Channel:
    """One direction of a link: frames handed to `send` at the start of serialisation reach
    `deliver(port, frame)` on the far node after serialisation + propagation + `extra_ns` (the far node's
    pipeline latency). `port` is whatever the far node's `deliver` wants first: a switch's port number, a
    host NIC's (link, endpoint, plane).

    Arrivals take their place in the event order from the channel's own counter, (source << 40) + k for
    its k-th frame, not from the scheduler's global one: equal-time arrivals are then ordered by (channel
    id, per-channel sequence), which every way of splitting the fabric over processes reproduces (a frame
    crossing to another process carries its place along). The source id is fixed by the topology
    (`VirtualFabric.channel_sources`); all channel places lie below the scheduler's own counter
    (`SCHEDULER_PLACES`), so within an instant arrivals run first, then the other events in scheduling order."""

    __slots__ = ("link", "deliver", "port", "fixed_ns", "tx_bytes", "early", "_push", "_next", "_first")

    def __init__(self, link: Link, deliver: Callable[[Any, Any], None], port: Any, extra_ns: int = 0,
                 source: int = 1) -> None:
        self.link = link
        self.deliver = deliver
        self.port = port
        self.fixed_ns = link.delay_ns + extra_ns  # what every frame adds to its serialisation (both are fixed)
        self.tx_bytes = 0
        # `early(port, frame, arrival_ns, place)`: the far node takes the frame now and accounts it for its
        # arrival instant by then, in the place its arrival event would have had, returning True — or False,
        # and the arrival is an event as usual (VirtualEndpoints.defer_arrival)
        self.early: Callable[[Any, Any, int, int], bool] | None = None
        if not 1 <= source < MAX_SOURCES:
            raise SimError(f"link {link.name}: channel source id must be in 1..{MAX_SOURCES - 1} (got {source})")
        self._push = link.sim.push  # the scheduler's unchecked `at`, bound once
        # the place of the next frame's arrival; every frame put on the wire takes one, so the frames sent
        # are counted by the places taken since `_first` (`tx_packets`), not by a counter of their own
        self._first = self._next = source << SOURCE_SHIFT

    @property
    def tx_packets(self) -> int:
        """Frames put on the wire (one arrival place each)."""
        return self._next - self._first

    @tx_packets.setter
    def tx_packets(self, n: int) -> None:  # counters merged from partition workers (vfabric/partition.py)
        self._first = self._next - n

    @property
    def rate_bps(self) -> float:
        return self.link.rate_bps

    @property
    def ns_per_byte(self) -> float:
        return self.link.ns_per_byte

    def send(self, frame: Any, start_ns: float) -> float:
        """Put `frame` on the wire starting at `start_ns` (never before now); returns when its last bit has
        left (ns)."""
        link = self.link
        n = len(frame)
        end = start_ns + ((n if n > 60 else 60) + WIRE_OVERHEAD) * link.ns_per_byte
        if not link.up:
            link.lost += 1
            return end
        self.tx_bytes += n
        # The receiver is called directly at arrival (no wrapper per hop); it drops the frame if the link
        # went down meanwhile (`Link.up`, which the switch's port state and the host NIC both follow).
        # Arrival is in the future by construction (end > start >= now), so the event is posted without
        # `Simulator.at`'s checks.
        arrive = floor(end + 0.999999) + self.fixed_ns  # (floor: int() of a float, half the cost; times are >= 0)
        place = self._next
        self._next = place + 1
        early = self.early
        if early is not None and early(self.port, frame, arrive, place):
            return end
        self._push((arrive, place, self.deliver, (self.port, frame)))
        return end
