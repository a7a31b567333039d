"""How a NIC picks, for each packet (or flowlet) of a flow, one of the planes both endpoints have
(`HostConfig.plane_policy`): `round-robin` takes the next plane, `least-loaded` the one whose local NIC
port frees up first. Either steers around a plane on which it saw loss — a retransmission marks the plane
the lost copy took as suspect for a while, longer on repeated trouble — as ETH+/UEC NICs do.

Clock-free and host-free, so the replay engine (wall clock, sockets) and vfabric's endpoints (virtual time)
share it: the caller hands in `now` (ns) and a `load(k)` telling how busy the NIC port of path k is (any
comparable number; lower is freer). A flow with one path (`pinned`, or one common plane) needs none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

ENTROPY_MASK = 0x3FFF  # the 14 bits of ETH+ path entropy a NIC varies per choice


def flow_planes(policy: str, src_planes: Sequence[int], dst_planes: Sequence[int], plane: int) -> list[int]:
    """The planes a flow may use: its own under `pinned`, else every plane both endpoints have, starting on
    the schedule's plane (so that a one-path choice equals `pinned`)."""
    if policy == "pinned":
        return [plane]
    common = [p for p in src_planes if p in dst_planes]
    if not common:
        return [plane]
    start = common.index(plane) if plane in common else 0
    return common[start:] + common[:start]


class PathHealth:
    """Until when each path of an endpoint pair is avoided (ns), and how often in a row it was: shared by
    all flows between the pair, like a NIC's per-peer path state."""

    __slots__ = ("avoid", "strikes")

    def __init__(self, npaths: int) -> None:
        self.avoid = [0] * npaths
        self.strikes = [0] * npaths


class PlaneChoice:
    """The plane state of one multi-path flow: current path `k`, the entropy its packets carry, which path
    each PSN last went on (so a retransmission knows where its copy was lost), when the flow last sent
    (`sent()`: flowlet boundaries) and whether a packet went out since the last choice (`used`; a host that
    may look for a plane again before it sends, as vfabric's NIC queues do, chooses only then)."""

    __slots__ = ("round_robin", "n", "k", "ent", "by_flowlet", "flowlet_ns", "last_tx_ns", "avoid_ns", "avoid",
                 "strikes", "psn_path", "used")

    def __init__(self, policy: str, npaths: int, npkts: int, health: PathHealth, avoid_ns: int, ent: int,
                 spray_unit: str = "packet", flowlet_ns: int = 0) -> None:
        if policy not in ("round-robin", "least-loaded"):
            raise ValueError(f"plane choice needs round-robin or least-loaded, not {policy!r}")
        if npaths < 2:
            raise ValueError("a plane choice needs at least two paths")
        self.round_robin = policy == "round-robin"
        self.n = npaths
        self.k = 0  # paths start on the schedule's plane
        self.ent = ent & ENTROPY_MASK
        self.by_flowlet = spray_unit == "flowlet"
        self.flowlet_ns = flowlet_ns
        self.last_tx_ns = -(1 << 62)
        self.avoid_ns = avoid_ns
        self.avoid = health.avoid
        self.strikes = health.strikes
        self.psn_path = bytearray(npkts)
        self.used = True

    def due(self, now: int) -> bool:
        """Is the next packet a new choice (every packet; under `flowlet` only after an idle gap)?"""
        return not self.by_flowlet or now - self.last_tx_ns > self.flowlet_ns

    def choose(self, now: int, load: Callable[[int], float]) -> int:
        """Pick the path for the next packet, avoiding suspect ones while there is another."""
        avoid = self.avoid
        n = self.n
        if self.round_robin:
            k = self.k
            for _ in range(n):
                k = (k + 1) % n
                if avoid[k] <= now:
                    break
            self.k = k
        else:
            self.k = min(range(n), key=lambda j: (avoid[j] > now, load(j)))
        self.ent = (self.ent + 1) & ENTROPY_MASK
        self.used = False
        return self.k

    def taken(self, psn: int, retransmission: bool, now: int, srtt: int, load: Callable[[int], float]) -> int:
        """The transport gave `psn` to send now: if it is a retransmission, the path its last copy took is
        suspect (for max(avoid_ns, 2 srtt), doubled per repeated strike up to 16x) and, if the current path
        is suspect, the packet moves to the freest healthy one. Returns the path it goes on."""
        if retransmission:
            avoid = self.avoid
            bad = self.psn_path[psn]
            if avoid[bad] <= now:
                strikes = self.strikes
                strikes[bad] = min(strikes[bad] + 1, 4) if now - avoid[bad] < self.avoid_ns else 0
                avoid[bad] = now + (max(self.avoid_ns, 2 * srtt) << strikes[bad])
            if avoid[self.k] > now:
                ok = [j for j in range(self.n) if avoid[j] <= now]
                if ok:
                    self.k = min(ok, key=load)
        self.psn_path[psn] = self.k
        return self.k

    def sent(self, now: int) -> None:
        """A frame of this flow is out, on path `k`."""
        self.last_tx_ns = now
        self.used = True

    def stamp_entropy(self, buf: bytearray, offset: int) -> None:
        """Write this choice's entropy (ETH+ entropy field, top bits set as the engine's frames carry)."""
        ent = 0xC000 | self.ent
        buf[offset] = ent >> 8
        buf[offset + 1] = ent & 0xFF
