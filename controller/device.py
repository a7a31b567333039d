"""Counters, registers and queues of one switch: the part of SwitchConnection whose mechanism depends on the
target. p4exec serves all of it over P4Runtime (registers; its queue extern, docs/architecture.md); on BMv2
`self.bmv2` (controller/bmv2.py) takes over what PI's P4Runtime server does not implement."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from p4.v1 import p4runtime_pb2 as pb

from controller.codec import decode, encode
from controller.messages import queue_extern, unpack_queue_extern

if TYPE_CHECKING:
    from controller.bmv2 import Bmv2SideChannel
    from controller.p4info_index import P4InfoIndex


class DeviceMixin:
    """Mixed into SwitchConnection, which provides `_index`, `read` and `modify`."""

    bmv2: Bmv2SideChannel | None = None

    if TYPE_CHECKING:  # provided by SwitchConnection
        def _index(self) -> P4InfoIndex: ...
        def read(self, *entities: Any, timeout: float | None = None) -> Iterator[pb.Entity]: ...
        def modify(self, *entities: Any) -> int: ...

    def read_counter(self, name: str, index: int | None = None) -> dict[int, tuple[int, int]]:
        counter = self._index().get("counters", name)
        query = pb.CounterEntry(counter_id=counter.preamble.id)  # type: ignore[attr-defined]
        if index is not None:
            query.index.index = index
        return {e.counter_entry.index.index: (e.counter_entry.data.packet_count, e.counter_entry.data.byte_count)
                for e in self.read(query)}

    def read_register(self, name: str, index: int | None = None) -> dict[int, int]:
        register = self._index().get("registers", name)
        query = pb.RegisterEntry(register_id=register.preamble.id)  # type: ignore[attr-defined]
        if index is not None:
            query.index.index = index
        return {e.register_entry.index.index: decode(e.register_entry.data.bitstring) for e in self.read(query)}

    def write_register(self, name: str, index: int, value: int) -> None:
        register = self._index().get("registers", name)
        width = register.type_spec.bitstring.bit.bitwidth  # type: ignore[attr-defined]
        entry = pb.RegisterEntry(register_id=register.preamble.id)  # type: ignore[attr-defined]
        entry.index.index = index
        entry.data.bitstring = encode(value, width)
        self.modify(entry)

    # ---- device (p4exec queue extern) ----------------------------------------------------------------------------
    def port_status(self, timeout: float | None = None) -> dict[int, bool]:
        """Port -> link up, as the switch sees it (p4exec's queue extern; docs/architecture.md)."""
        if self.bmv2 is not None:
            return self.bmv2.port_status()
        return {e.extern_entry.extern_id: bool(unpack_queue_extern(e.extern_entry).get("up", True))
                for e in self.read(queue_extern(0), timeout=timeout)}

    def queue_settings(self, port: int = 0) -> dict[int, dict[str, Any]]:
        if self.bmv2 is not None:
            return self.bmv2.queue_settings()
        return {e.extern_entry.extern_id: unpack_queue_extern(e.extern_entry) for e in self.read(queue_extern(port))}

    def set_queue(self, port: int, **settings: float) -> None:
        """Change a port's queue (`depth`, `rate_pps`, `rate_bps`; 0 = unlimited). BMv2: depth, rate_pps."""
        if self.bmv2 is not None:
            return self.bmv2.set_queue(port, **settings)
        self.modify(queue_extern(port, **settings))
