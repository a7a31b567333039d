"""The switch process's device: what the P4Runtime server (and anything else in-process) drives.

The interface is the one in docs/architecture.md ("The switch device"), written once in
`p4exec.device.base`. Every change to what the data plane sees runs on the data-plane thread via
`DataPlane.call`, so the packet loop needs no locks; the data plane calls the packet-in and port listeners
itself, from the lists it shares with this device.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any, TypeVar

from p4exec.device.base import DeviceBase, PortInfo
from p4exec.device.program import Program
from p4exec.switch.dataplane import DataPlane
from p4exec.switch.program import make_live

T = TypeVar("T")


class SwitchDevice(DeviceBase):
    """Program + state + ports + traffic manager + packet-in/out + port status of one switch."""

    def __init__(self, dataplane: DataPlane, device_id: int = 0, seed: int = 0) -> None:
        super().__init__(packet_in=dataplane.packet_in_listeners, port_listeners=dataplane.port_listeners)
        self.dp = dataplane
        self.device_id = device_id
        self.seed = seed

    @property
    def cpu_port(self) -> int | None:
        return self.dp.cpu_port

    @property
    def tm(self) -> Any:  # type: ignore[override]
        return self.dp.tm

    @property
    def program(self) -> Program | None:
        """The committed program (p4info, config, state, pipeline) or None."""
        live = self.dp.live
        return None if live is None else live.program

    def _install(self, program: Program) -> None:
        """Packets already queued finish on the old pipeline."""
        live = make_live(program)
        self.dp.call(lambda: self.dp.commit(live))

    def control(self, fn: Callable[[], T]) -> T:
        """Run a control-plane change on the data-plane thread, between two packets.

        No time bound: a DATAPLANE_ATOMIC batch of 20k updates takes seconds, and giving up
        would leave it running anyway (the loop would still execute it later)."""
        return self.dp.call(fn, timeout=None)

    def packet_out(self, frame: bytes) -> None:
        cpu = self.dp.cpu_port
        if cpu is None:
            raise ValueError("switch has no CPU port (--cpu-port)")
        self.dp.post(lambda: self.dp.inject(cpu, bytes(frame)))

    # ---------------------------------------------------------------- ports and stats

    def port_status(self) -> dict[int, PortInfo]:
        dp = self.dp
        return {n: PortInfo(p.iface, p.up, n in dp.gone) for n, p in sorted(dp.ports.items())}

    def stats(self) -> dict:
        snap = self.dp.call(self.dp.stats_snapshot)
        snap["queues"] = {
            str(n): dict(pq.config.as_dict(), backlog=pq.backlog, tail_drops=pq.drops)
            for n, pq in sorted(self.dp.tm.ports.items())
        }
        # Frames the kernel refused on send, by errno name (ENOBUFS: the interface's qdisc was full).
        snap["send_errors"] = self.dp.call(self._send_errors)
        return snap

    def _send_errors(self) -> dict[str, dict[str, int]]:
        return {
            str(n): {errno.errorcode.get(code, str(code)): count for code, count in sorted(p.send_errors.items())}
            for n, p in sorted(self.dp.ports.items()) if p.send_errors
        }
