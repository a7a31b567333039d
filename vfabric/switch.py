"""A simulated switch: the compiled v1model pipeline + the shared traffic manager, on the simulator's clock.

It is also the device the in-process P4Runtime server serves (the interface of docs/architecture.md, "The
switch device"): pipeline push, table writes (through the program's runtime state), packet-in/out, queue
settings, port status. The controller only ever runs while virtual time stands still, so the data path
needs no locks; `control(fn)` still takes one, because gRPC calls arrive on server threads.

Timing: a frame's last bit arrives at t; ingress runs and the copies are queued at t + pipeline latency
(the link delivers the frame then); a port's queue is served at the port's line rate (the traffic manager
paces at the link rate, counting Ethernet's wire overhead), egress runs when a packet leaves the queue,
and the frame is on the wire from that instant.
"""

from __future__ import annotations

from typing import Any

from p4exec.device.base import DeviceBase, PortInfo
from p4exec.device.program import Program
from p4exec.switch.batch import run_one
from p4exec.switch.loop import SwitchLoop
from p4exec.switch.program import make_live
from p4exec.switch.stats import LOOP_REASONS, TX_ERROR
from p4exec.switch.tm import QueueConfig, TrafficManager
from topologies.model import switch_mac
from vfabric.events import Simulator
from vfabric.links import WIRE_OVERHEAD, Channel

DEFAULT_PIPELINE_LATENCY_NS = 400  # a 51.2T switch chip's port-to-port latency is a few hundred ns


def _place(item: tuple[int, bytes, int]) -> int:
    return item[2]


class VirtualSwitch(SwitchLoop, DeviceBase):
    """One switch on the simulator: the shared switch loop (p4exec/switch/loop.py) with channels as its ports
    out and the simulator as its timer; `ports` maps port number -> Channel towards the peer (filled in by
    the fabric)."""

    def __init__(self, sim: Simulator, name: str, device_id: int, queue: QueueConfig, nqueues: int = 1,
                 pipeline_latency_ns: int = DEFAULT_PIPELINE_LATENCY_NS, cpu_port: int | None = 255,
                 seed: int = 0) -> None:
        if pipeline_latency_ns < 0:
            raise ValueError(f"switch {name}: negative pipeline latency {pipeline_latency_ns} ns")
        self.sim = sim
        self.name = name
        self.device_id = device_id
        self.seed = seed
        self.pipeline_latency_ns = int(pipeline_latency_ns)
        self.ports: dict[int, Channel] = {}
        self.up: dict[int, bool] = {}
        super().__init__(TrafficManager(queue, nqueues, clock=sim), sim, cpu_port, self.ports, self.up,
                         min_frame=60, wire_overhead=WIRE_OVERHEAD)
        self.drops = dict.fromkeys(LOOP_REASONS, 0)
        self.received = 0
        self._instants: dict[int, list[tuple[int, bytes, int]]] = {}  # arrival ns -> frames due then (`defer_arrival`)
        DeviceBase.__init__(self)  # listeners and the lock `control` takes (gRPC calls come on server threads)
        self.packet_out_inbox: list[bytes] = []  # packet-outs from gRPC threads, injected at the next barrier

    # ---------------------------------------------------------------- wiring
    def attach(self, port: int, channel: Channel) -> None:
        self.ports[port] = channel
        self.up[port] = True
        self.tm.configure(port, rate_bps=channel.link.rate_bps)

    def port_mac(self, port: int) -> bytes:
        """The source MAC of the port's link control frames (PFC, CBFC)."""
        return bytes.fromhex(switch_mac(self.device_id, port).replace(":", ""))

    # ---------------------------------------------------------------- device interface (P4Runtime server)
    @property
    def program(self) -> Program | None:
        return None if self.live is None else self.live.program

    def _install(self, program: Program) -> None:
        live = make_live(program)
        with self._lock:
            for port, up in self.up.items():
                live.set_port_up(port, up)
            self.set_live(live)

    @property
    def stopped(self) -> bool:
        """A stopped switch drops everything (fault "switch_stop")."""
        return self.stopped_loop

    @stopped.setter
    def stopped(self, stop: bool) -> None:
        self.stopped_loop = stop
        self._forwarding()

    def packet_out(self, frame: bytes) -> None:
        with self._lock:
            self.packet_out_inbox.append(bytes(frame))

    def port_status(self) -> dict[int, PortInfo]:
        return {n: PortInfo(f"{self.name}-p{n}", up, False) for n, up in sorted(self.up.items())}

    def stats(self) -> dict:
        return {"received": self.received, "dropped_by_reason": dict(self.drops),
                "queues": {str(n): dict(pq.config.as_dict(), backlog=pq.backlog, tail_drops=pq.drops,
                                        max_depth=pq.max_depth) for n, pq in sorted(self.tm.ports.items())}}

    # ---------------------------------------------------------------- faults
    def set_port_up(self, port: int, up: bool) -> None:
        """Carrier change: the program's liveness register at once, a downed port's queue is flushed."""
        if port not in self.up or self.up[port] == up:
            return
        self.up[port] = up
        self.port_changed(port)
        if not up:
            self.flush(port)
        if self.live is not None:
            self.live.set_port_up(port, up)
        self._emit_port(port, up)

    def clear_packet_outs(self) -> None:
        with self._lock:
            self.packet_out_inbox = []

    def drain_packet_outs(self) -> int:
        """Inject the packet-outs that arrived over gRPC (runs at a control barrier, in virtual time)."""
        with self._lock:
            frames, self.packet_out_inbox = self.packet_out_inbox, []
        if self.cpu_port is not None:
            for frame in frames:
                self.receive(self.cpu_port, frame)
        return len(frames)

    # ---------------------------------------------------------------- data path
    def defer_arrival(self, port: int, frame: bytes, arrive: int, seq: int) -> bool:
        """`Channel.early` into this switch: the frames that reach it in the same nanosecond share one event
        (a symmetric collective's frames arrive together on every port), so the pipeline runs for them back
        to back. Each frame keeps the place its own arrival event would have had (`seq`, its channel's), which
        lets `_receive_from` keep the event order exactly."""
        due = self._instants.get(arrive)
        if due is None:
            due = self._instants[arrive] = [(port, frame, seq)]
            self.sim.push((arrive, seq, self._receive_from, (due, 0)))
        elif seq < due[0][2]:  # an earlier place than the batch's event (a lower channel id): run from there
            due.insert(0, (port, frame, seq))
            self.sim.push((arrive, seq, self._receive_from, (due, 0)))
        else:
            due.append((port, frame, seq))
        return True

    def _receive_from(self, due: list[tuple[int, bytes, int]], i: int) -> None:
        """Receive `due[i:]`, frames arriving now, in the order of their places (i = 0: the instant's first event, which
        closes its batch). Should an event of this instant have been scheduled between two of them, the rest
        waits for its turn: an event at the place the next frame reserved. So every event runs exactly where
        it would have with one arrival event per frame."""
        sim = self.sim
        if not i:
            if self._instants.pop(sim.now, None) is not due:
                return  # this batch already ran, from the earlier place of a frame added later
            if len(due) == 1:  # a frame that arrived alone (most frames beyond the first hop): nothing to order
                port, frame, _seq = due[0]
                self.receive(port, frame)
                return
            due.sort(key=_place)  # channel places, not sending order: the order one event per frame has
        # what this instant still runs; receiving frames only schedules events at later places (a frame's
        # arrival is always in the future, every other event takes a place after every channel's)
        first = sim.first_place_now()
        end = i + 1
        while end < len(due) and due[end][2] <= first:
            end += 1
        if end - i == 1:
            port, frame, _seq = due[i]
            self.receive(port, frame)
        else:
            self.receive_batch(due[i:end])
        if end < len(due):
            sim.push((sim.now, due[end][2], self._receive_from, (due, end)))

    def receive_batch(self, frames: list[tuple[int, bytes, int]]) -> None:
        """`receive` of each frame in turn, handed to the switch loop as one batch."""
        up, cpu = self.up, self.cpu_port
        items = []
        for port, frame, _seq in frames:
            self.received += 1
            if port != cpu and not up[port]:
                self.ports[port].link.lost += 1
                continue
            items.append((port, frame, None))
        self.ingress_batch(items)

    def receive(self, port: int, frame: bytes) -> None:
        """A frame has arrived on `port` and passed the pipeline latency: the switch loop takes it."""
        self.received += 1
        if port != self.cpu_port and not self.up[port]:  # the link went down while the frame was on it
            self.ports[port].link.lost += 1
            return
        one = self._one
        if one is not None:  # what `ingress` would do first, one call sooner
            run_one(self, one, port, frame, None)
        else:
            self.ingress(port, frame, None)

    # ---------------------------------------------------------------- the switch loop's hooks: one flat tally
    def _send_copy(self, fate: Any, port: int, frame: bytes, start: float, /) -> None:
        """A copy's one frame out of `port` (the common case): straight onto an up port's channel; otherwise the
        generic path."""
        if port != self.cpu_port and self.up.get(port):
            ch = self.out.get(port)
            if ch is not None:
                if ch.send(frame, start) is False:
                    self.drops[TX_ERROR] += 1
                return
        SwitchLoop._send_copy(self, fate, port, frame, start)

    # A packet's one frame out (the batch path's common case) is the same here: there is no copy to account
    # (`_copies` gives no token, `_copy_done` does nothing), so the packet's context stands in for the token.
    _forward_one = _send_copy

    def _lost(self, ctx: Any, reason: str) -> None:
        self.drops[reason] += 1

    def _dropped(self, fate: Any, reason: str) -> None:
        self.drops[reason] += 1

    def _packet_in(self, frame: bytes) -> None:
        self._emit_packet_in(frame)
