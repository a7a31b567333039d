"""The device contract: what the P4Runtime server serves, written once.

`P4RuntimeDevice` is the Protocol the server is written against (docs/architecture.md, "The switch
device"). `DeviceBase` is what every device shares: loading a pipeline, committing it with its digest sink,
the listeners for packet-in, digests and port status, and queue settings over the device's traffic manager.
A device adds only what is its own: how a program becomes live (`_install`), where packet-outs go, which
ports it has, how a control-plane change is kept apart from packets (`control`), and its stats. Three
devices exist: the switch process's `p4exec.switch.device.SwitchDevice`, the in-process
`p4exec.switch.inprocess.InProcessDevice`, and vfabric's `VirtualSwitch`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from p4.config.v1 import p4info_pb2

from p4exec.device.program import Program, attach_digest_sink, load_program

T = TypeVar("T")


@dataclass(frozen=True)
class PortInfo:
    """A port as the device reports it: its interface name, carrier, and whether the interface vanished."""

    iface: str
    up: bool = True
    gone: bool = False


class QueueView(Protocol):
    """One egress queue's configuration (0 = unlimited)."""

    @property
    def depth(self) -> int: ...

    @property
    def rate_pps(self) -> float: ...

    @property
    def rate_bps(self) -> float: ...


class P4RuntimeDevice(Protocol):
    """A device the P4Runtime server can serve. `control(fn)` is required: the server runs every state change
    (and every read of live state) through it, so a device whose packets run on another thread can make a
    whole batch visible to packets at once (DATAPLANE_ATOMIC)."""

    @property
    def device_id(self) -> int: ...

    @property
    def cpu_port(self) -> int | None: ...

    @property
    def program(self) -> Program | None:
        """The committed program (the one the device starts with), or None."""

    def load_config(self, p4info: p4info_pb2.P4Info | None, device_config: bytes) -> Program:
        """Compile and check a pipeline without touching the live one (VERIFY)."""

    def commit(self, program: Program) -> None:
        """Make `program` live; later packets see it."""

    def control(self, fn: Callable[[], T]) -> T:
        """Run `fn` while no packet is in the pipeline and return its result (or raise its error)."""

    def packet_out(self, frame: bytes) -> None: ...

    def add_packet_in_listener(self, fn: Callable[[bytes], None]) -> None: ...

    def remove_packet_in_listener(self, fn: Callable[[bytes], None]) -> None: ...

    def add_digest_listener(self, fn: Callable[[int, list], None]) -> None: ...

    def add_port_listener(self, fn: Callable[[int, bool], None]) -> None: ...

    def port_status(self) -> Mapping[int, PortInfo]: ...

    def set_queue(self, port: int, depth: int | None = None, rate_pps: float | None = None,
                  rate_bps: float | None = None) -> QueueView: ...

    def queue_config(self, port: int) -> QueueView: ...

    def stats(self) -> dict: ...


class DeviceBase:
    """The shared part of every device. Subclasses set `device_id`, `cpu_port`, `seed` and `tm` (a
    `p4exec.switch.tm.TrafficManager`: the queue settings live there) and write `_install`, `packet_out`,
    `port_status` and `stats`; `control` takes a lock unless the device has a better way.

    The listener lists may be handed in, so a data plane that calls them on its own thread (the switch
    process's) and the device share one list each."""

    seed: int = 0
    tm: Any

    def __init__(self, packet_in: list[Callable[[bytes], None]] | None = None,
                 port_listeners: list[Callable[[int, bool], None]] | None = None) -> None:
        self._packet_in_listeners = packet_in if packet_in is not None else []
        self._port_listeners = port_listeners if port_listeners is not None else []
        self._digest_listeners: list[Callable[[int, list], None]] = []
        self._lock = threading.RLock()

    # ---------------------------------------------------------------- pipeline

    def load_config(self, p4info: p4info_pb2.P4Info | None, device_config: bytes) -> Program:
        """Compile and check a pipeline without touching the live one (VERIFY)."""
        return load_program(device_config, p4info=p4info, seed=self.seed)

    def commit(self, program: Program) -> None:
        """Make `program` live with its fresh state; its digests reach this device's listeners."""
        attach_digest_sink(program, self._emit_digest)
        self._install(program)

    def _install(self, program: Program) -> None:
        """Make `program` the one later packets run."""
        raise NotImplementedError

    def control(self, fn: Callable[[], T]) -> T:
        """Run a control-plane change while no packet is in the pipeline."""
        with self._lock:
            return fn()

    # ---------------------------------------------------------------- listeners

    def add_packet_in_listener(self, fn: Callable[[bytes], None]) -> None:
        """fn(frame) for every frame the program sends to the CPU port (called on the data-plane thread)."""
        self._packet_in_listeners.append(fn)

    def remove_packet_in_listener(self, fn: Callable[[bytes], None]) -> None:
        if fn in self._packet_in_listeners:
            self._packet_in_listeners.remove(fn)

    def add_digest_listener(self, fn: Callable[[int, list], None]) -> None:
        """fn(digest_id, values) for every digest() the program executes."""
        self._digest_listeners.append(fn)

    def add_port_listener(self, fn: Callable[[int, bool], None]) -> None:
        """fn(port, up) on every carrier change."""
        self._port_listeners.append(fn)

    def _emit_packet_in(self, frame: bytes) -> None:
        for fn in list(self._packet_in_listeners):
            fn(frame)

    def _emit_digest(self, digest_id: int, values: list) -> None:
        for fn in list(self._digest_listeners):
            fn(digest_id, values)

    def _emit_port(self, port: int, up: bool) -> None:
        for fn in list(self._port_listeners):
            fn(port, up)

    # ---------------------------------------------------------------- queues

    def set_queue(self, port: int, depth: int | None = None, rate_pps: float | None = None,
                  rate_bps: float | None = None) -> QueueView:
        """BMv2's set_queue_depth / set_queue_rate for one egress port (rates 0 = unlimited); a copy of the
        result, never the live setting."""
        cfg = self.control(lambda: self.tm.configure(port, depth=depth, rate_pps=rate_pps, rate_bps=rate_bps))
        return replace(cfg)

    def queue_config(self, port: int) -> QueueView:
        pq = self.tm.ports.get(port)
        return replace(pq.config if pq is not None else self.tm.default)
