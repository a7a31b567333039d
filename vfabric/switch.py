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

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from p4exec.switch.loop import SwitchLoop
from p4exec.switch.program import load_program, make_live
from p4exec.switch.stats import LOOP_REASONS
from p4exec.switch.tm import QueueConfig, TrafficManager
from vfabric.events import Simulator
from vfabric.links import WIRE_OVERHEAD, Channel

DEFAULT_PIPELINE_LATENCY_NS = 400  # a 51.2T switch chip's port-to-port latency is a few hundred ns


@dataclass(frozen=True)
class PortInfo:
    iface: str
    up: bool
    gone: bool


class VirtualSwitch(SwitchLoop):
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
        self._lock = threading.RLock()
        self._packet_in_listeners: list[Callable[[bytes], None]] = []
        self._digest: list[Callable[[int, list], None]] = []
        self._port_listeners: list[Callable[[int, bool], None]] = []
        self.packet_out_inbox: list[bytes] = []  # packet-outs from gRPC threads, injected at the next barrier

    # ---------------------------------------------------------------- wiring
    def attach(self, port: int, channel: Channel) -> None:
        self.ports[port] = channel
        self.up[port] = True
        self.tm.configure(port, rate_bps=channel.link.rate_bps)

    # ---------------------------------------------------------------- device interface (P4Runtime server)
    @property
    def program(self) -> Any:
        return None if self.live is None else self.live.program

    def load_config(self, p4info: Any, device_config: bytes) -> Any:
        return load_program(device_config, p4info=p4info, seed=self.seed)

    def commit(self, program: Any) -> None:
        from p4exec.p4runtime import backend

        backend.attach_digest_sink(program, self._emit_digest)
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

    def control(self, fn: Callable[[], Any]) -> Any:
        with self._lock:
            return fn()

    def packet_out(self, frame: bytes) -> None:
        with self._lock:
            self.packet_out_inbox.append(bytes(frame))

    def add_packet_in_listener(self, fn: Callable[[bytes], None]) -> None:
        self._packet_in_listeners.append(fn)

    def remove_packet_in_listener(self, fn: Callable[[bytes], None]) -> None:
        if fn in self._packet_in_listeners:
            self._packet_in_listeners.remove(fn)

    def add_digest_listener(self, fn: Callable[[int, list], None]) -> None:
        self._digest.append(fn)

    def _emit_digest(self, digest_id: int, values: list) -> None:
        for fn in list(self._digest):
            fn(digest_id, values)

    def set_queue(self, port: int, depth: int | None = None, rate_pps: float | None = None,
                  rate_bps: float | None = None) -> QueueConfig:
        with self._lock:
            cfg = self.tm.configure(port, depth=depth, rate_pps=rate_pps, rate_bps=rate_bps)
            return QueueConfig(cfg.depth, cfg.rate_pps, cfg.rate_bps)

    def queue_config(self, port: int) -> QueueConfig:
        cfg = self.tm.port(port).config
        return QueueConfig(cfg.depth, cfg.rate_pps, cfg.rate_bps)

    def port_status(self) -> dict[int, PortInfo]:
        return {n: PortInfo(f"{self.name}-p{n}", up, False) for n, up in sorted(self.up.items())}

    def add_port_listener(self, fn: Callable[[int, bool], None]) -> None:
        self._port_listeners.append(fn)

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
        if not up:
            self.flush(port)
        if self.live is not None:
            self.live.set_port_up(port, up)
        for fn in list(self._port_listeners):
            fn(port, up)

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
    def defer_arrival(self, port: int, frame: bytes, arrive: int) -> bool:
        """`Channel.early` into this switch: the frames that reach it in the same nanosecond share one event
        (a symmetric collective's frames arrive together on every port), so the pipeline runs for them back
        to back. Each frame takes the sequence number its own arrival event would have had, which lets
        `_receive_from` keep the event order exactly."""
        seq = self.sim.next_place()
        due = self._instants.get(arrive)
        if due is None:
            due = self._instants[arrive] = [(port, frame, seq)]
            self.sim.push((arrive, seq, self._receive_from, (due, 0)))
        else:
            due.append((port, frame, seq))
        return True

    def _receive_from(self, due: list[tuple[int, bytes, int]], i: int) -> None:
        """Receive `due[i:]`, frames arriving now, in sending order (i = 0: the instant's first event, which
        closes its batch). Should an event of this instant have been scheduled between two of them, the rest
        waits for its turn: an event at the place the next frame reserved. So every event runs exactly where
        it would have with one arrival event per frame."""
        sim = self.sim
        if not i:
            del self._instants[sim.now]
        # what this instant still runs; receiving frames only schedules events at later places
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
        self.ingress(port, frame, None)

    # ---------------------------------------------------------------- the switch loop's hooks: one flat tally
    def _lost(self, ctx: Any, reason: str) -> None:
        self.drops[reason] += 1

    def _dropped(self, fate: Any, reason: str) -> None:
        self.drops[reason] += 1

    def _packet_in(self, frame: bytes) -> None:
        for fn in list(self._packet_in_listeners):
            fn(frame)
