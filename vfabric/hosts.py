"""Hosts in virtual time: the host/NIC model of traffic/host.py on the virtual-time scheduler, its NIC
ports wired to the fabric's link channels (vfabric/links.py), paced by wire bytes (preamble, FCS and gap
included), with the published reaction constants. Same frames, transports, receive accounting, reactions
and records (RunResult) as the emulated engine, which runs the same model on real sockets.

What only virtual time has is here: accounting a batch of frames towards hosts ahead of their arrival
instant, each in the place of the event order its own arrival would have had (`defer_arrival`).
"""

from __future__ import annotations

from collections.abc import Callable

from topologies.model import Topology
from traffic.host import TX_AHEAD_NS, Endpoints, HostConfig, NicPort
from traffic.replay import ports_for_topology
from vfabric.events import Simulator
from vfabric.links import Link, wire_bytes

__all__ = ["TX_AHEAD_NS", "HostConfig", "NicPort", "VirtualEndpoints"]


class VirtualEndpoints(Endpoints):
    """All endpoints of a topology in virtual time. `attach(eid, plane, channel)` wires a NIC port to its link;
    the fabric delivers frames to `receive((link, eid, plane), frame)`."""

    def __init__(self, sim: Simulator, topo: Topology, config: HostConfig | None = None) -> None:
        super().__init__(sim, ports_for_topology(topo, lambda _h: None),  # type: ignore[arg-type, return-value]
                         config, frame_bytes=wire_bytes)
        self.sim: Simulator = sim
        self.topo = topo
        # frames towards hosts waiting to be accounted (`defer_arrival`): (at, frame, arrival ns, sequence)
        self._arrivals: list[tuple[tuple[Link, int, int], bytes, int, int]] = []
        self._flush_at: int | None = None  # arrival instant of the pending batch event
        # places of the batch events: the fabric gives them a source id just before every host link's, so a
        # batch runs before any arrival at a host in its instant (VirtualFabric.channel_sources)
        self.batch_place: Callable[[], int] = sim.next_place

    def early_delivery_allowed(self) -> bool:
        """Whether a frame's arrival may be accounted ahead of its instant (`defer_arrival`): the
        receiver then only keeps statistics whose order is the wire's order on that one link — unpaced,
        unreliable, one path per flow (no reaction, feedback or plane choice reads them at a later
        instant). The caller adds what it knows: no faults (links stay up)."""
        return self.unpaced and not self.reliable and all(f.plane is None for f in self.flows)

    def defer_arrival(self, at: tuple[Link, int, int], frame: bytes, arrive: int, seq: int) -> bool:
        """`Channel.early` towards a host: a frame that starts its last hop now and arrives at `arrive` is
        accounted in a batch, by one event at the earliest arrival of the frames waiting, instead of by an
        event of its own (the switch's pipeline then runs back to back with less host code in between).
        Each frame keeps the place in the event order that its own arrival event would have had (`seq`, its
        channel's; the batch's event takes a place before every host arrival of its instant).
        False — the arrival is an event as usual — when the frame would arrive after the virtual-time limit."""
        sim = self.sim
        if arrive > sim.until_ns:
            return False
        self._arrivals.append((at, frame, arrive, seq))
        flush_at = self._flush_at
        if flush_at is None or arrive < flush_at:
            self._flush_at = arrive
            sim.push((arrive, self.batch_place(), self._account_arrivals, ()))
        return True

    def _account_arrivals(self) -> None:
        """The batch event: every waiting data frame accounted now for its arrival instant, in the order they
        were sent; a flow it completes settles by an event at that instant, in the place the frame reserved.
        A frame whose outcome could depend on the run ending first becomes its own arrival event instead, at
        its reserved place: anything but a data frame of a flow still incomplete (what follows a complete flow
        may be cut off by the end of the run), or one arriving after its flow may be given up (loss grace)."""
        batch = self._arrivals
        if not batch:
            return  # an earlier batch event took them
        self._arrivals = []
        self._flush_at = None
        parse, flows, push = self.parse, self.flows, self.sim.push
        nflows, grace = len(flows), self.config.loss_grace_ns
        for at, frame, arrive, seq in batch:
            p = parse(frame)
            if p is not None and p.feedback is None and p.flow < nflows:
                f = flows[p.flow]
                rx = f.rx
                npkts = rx.npkts
                done = f.rec.send_done_ns
                # (`rx.complete`, inlined)
                if f.dst_ep == at[1] and rx.delivered != npkts and npkts == p.npkts and not (
                        done and arrive >= done + grace):
                    rx.on_packet(p, arrive)
                    f.last_progress_ns = arrive
                    if rx.delivered == npkts:
                        push((arrive, seq, self._arrived_complete, (p.flow,)))
                    continue
            push((arrive, seq, self.receive, (at, frame)))

    def _arrived_complete(self, fid: int) -> None:
        if not self.flows[fid].rec.settle_ns:
            self._settle(fid)
