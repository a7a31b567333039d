"""In-process device: the object the P4Runtime server serves when no `p4exec switch` runs.

It implements the device interface of docs/architecture.md ("The switch device"):
the switch process provides its own object with the same methods (real ports, a
traffic manager); tests and embedded uses get this one, which runs the compiled
program synchronously on the caller's thread. All coupling to the compiler and
the runtime lives in `p4exec.p4runtime.backend`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2

from p4exec.p4runtime import backend


@dataclass
class QueueConfig:
    """Egress queue of one port; 0 means unlimited (BMv2's set_queue_depth/rate)."""

    depth: int = 64
    rate_pps: int = 0
    rate_bps: int = 0


@dataclass
class PortInfo:
    iface: str = ""
    up: bool = True
    gone: bool = False


@dataclass
class Device:
    """A p4exec device without real ports: frames out of the pipeline go to `on_output`."""

    device_id: int = 1
    cpu_port: int | None = 255
    ports: tuple[int, ...] = ()
    on_output: Callable[[int, bytes], None] | None = None
    program: backend.Program | None = None
    _queues: dict[int, QueueConfig] = field(default_factory=dict)
    _packet_in: list[Callable[[bytes], None]] = field(default_factory=list)
    _digest: list[Callable[[int, list], None]] = field(default_factory=list)
    _port_listeners: list[Callable[[int, bool], None]] = field(default_factory=list)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    # -- pipeline -------------------------------------------------------------------------------
    def load_config(self, p4info: p4info_pb2.P4Info, device_config: bytes) -> backend.Program:
        """Compile/verify only; nothing becomes live (VERIFY)."""
        return backend.load_program(p4info, device_config)

    def commit(self, program: backend.Program) -> None:
        """Make `program` live with its fresh state; later packets see it."""
        with self._lock:
            self.program = program
            backend.attach_digest_sink(program, self._emit_digest)

    def control(self, fn):
        """Run a control-plane change while no packet is in the pipeline."""
        with self._lock:
            return fn()

    # -- packet I/O -----------------------------------------------------------------------------
    def packet_out(self, frame: bytes) -> None:
        """Run `frame` (controller header in front) through the pipeline from the CPU port."""
        if self.cpu_port is None:
            return
        self.inject(self.cpu_port, frame)

    def inject(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """Send a frame into ingress port `port`; return the frames not sent to the CPU."""
        with self._lock:
            program = self.program
            if program is None:
                return []
            outputs = backend.run_packet(program, port, frame)
        out = []
        for eport, data in outputs:
            if self.cpu_port is not None and eport == self.cpu_port:
                for fn in list(self._packet_in):
                    fn(data)
            else:
                out.append((eport, data))
                if self.on_output is not None:
                    self.on_output(eport, data)
        return out

    def add_packet_in_listener(self, fn: Callable[[bytes], None]) -> None:
        self._packet_in.append(fn)

    def remove_packet_in_listener(self, fn: Callable[[bytes], None]) -> None:
        if fn in self._packet_in:
            self._packet_in.remove(fn)

    def add_digest_listener(self, fn: Callable[[int, list], None]) -> None:
        """fn(digest_id, values) for every digest() the program executes."""
        self._digest.append(fn)

    def _emit_digest(self, digest_id: int, values: list) -> None:
        for fn in list(self._digest):
            fn(digest_id, values)

    # -- traffic manager and ports --------------------------------------------------------------
    def set_queue(self, port: int, depth: int | None = None, rate_pps: int | None = None,
                  rate_bps: int | None = None) -> QueueConfig:
        with self._lock:
            q = self._queues.setdefault(port, QueueConfig())
            if depth is not None:
                q.depth = depth
            if rate_pps is not None:
                q.rate_pps = rate_pps
            if rate_bps is not None:
                q.rate_bps = rate_bps
            return QueueConfig(q.depth, q.rate_pps, q.rate_bps)

    def queue_config(self, port: int) -> QueueConfig:
        with self._lock:
            q = self._queues.get(port, QueueConfig())
            return QueueConfig(q.depth, q.rate_pps, q.rate_bps)

    def port_status(self) -> dict[int, PortInfo]:
        ports = set(self.ports) | set(self._queues)
        return {p: PortInfo(iface=f"port{p}") for p in sorted(ports)}

    def add_port_listener(self, fn: Callable[[int, bool], None]) -> None:
        self._port_listeners.append(fn)

    def stats(self) -> dict:
        return {}
