"""What the P4Runtime server needs from a device: the contract between the server and a target.

Two devices implement it: the in-process `p4exec.p4runtime.device.Device` (tests, embedded uses)
and the switch's `p4exec.switch.device.SwitchDevice`. `control(fn)` is required: the server runs
every state change (and every read of live state) through it, so a device whose packets run on
another thread can make a whole batch visible to packets at once (DATAPLANE_ATOMIC).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from p4.config.v1 import p4info_pb2

T = TypeVar("T")


class PortView(Protocol):
    """A port as the queue extern shows it."""

    @property
    def up(self) -> bool: ...


class QueueView(Protocol):
    """One egress queue's configuration (0 = unlimited)."""

    @property
    def depth(self) -> int: ...

    @property
    def rate_pps(self) -> float: ...

    @property
    def rate_bps(self) -> float: ...


class P4RuntimeDevice(Protocol):
    """A device the P4Runtime server can serve."""

    @property
    def device_id(self) -> int: ...

    @property
    def program(self) -> Any:
        """The committed `backend.Program` the device starts with, or None."""

    def load_config(self, p4info: p4info_pb2.P4Info, device_config: bytes) -> Any:
        """Compile and check a pipeline without touching the live one (VERIFY)."""

    def commit(self, program: Any) -> None:
        """Make `program` live; later packets see it."""

    def control(self, fn: Callable[[], T]) -> T:
        """Run `fn` while no packet is in the pipeline and return its result (or raise its error)."""

    def packet_out(self, frame: bytes) -> None: ...

    def add_packet_in_listener(self, fn: Callable[[bytes], None]) -> None: ...

    def remove_packet_in_listener(self, fn: Callable[[bytes], None]) -> None: ...

    def add_digest_listener(self, fn: Callable[[int, list], None]) -> None: ...

    def port_status(self) -> Mapping[int, PortView]: ...

    def set_queue(self, port: int, depth: int | None = None, rate_pps: Any = None,
                  rate_bps: Any = None) -> Any: ...

    def queue_config(self, port: int) -> QueueView: ...
