"""The in-process device: what a P4Runtime server serves when no `p4exec switch` process runs.

Tests, the differential tests and embedded uses get this one: it runs the committed program synchronously
on the caller's thread (`inject`) with empty queues, and hands frames out to `on_output`. The queue settings
are kept in a traffic manager like every device's, though no packet waits in it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from p4exec.device.base import DeviceBase, PortInfo
from p4exec.device.program import Program, run_packet
from p4exec.switch.tm import TrafficManager


class InProcessDevice(DeviceBase):
    """A p4exec device without real ports: frames out of the pipeline go to `on_output`."""

    def __init__(self, device_id: int = 1, cpu_port: int | None = 255, ports: Iterable[int] = (),
                 on_output: Callable[[int, bytes], None] | None = None, seed: int = 0) -> None:
        super().__init__()
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.ports = tuple(ports)
        self.on_output = on_output
        self.seed = seed
        self.program: Program | None = None
        self.tm = TrafficManager()

    def _install(self, program: Program) -> None:
        with self._lock:
            self.program = program

    # ---------------------------------------------------------------- packet I/O

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
            outputs = run_packet(program, port, frame)
        out = []
        for eport, data in outputs:
            if self.cpu_port is not None and eport == self.cpu_port:
                self._emit_packet_in(data)
            else:
                out.append((eport, data))
                if self.on_output is not None:
                    self.on_output(eport, data)
        return out

    # ---------------------------------------------------------------- ports and stats

    def port_status(self) -> dict[int, PortInfo]:
        ports = set(self.ports) | set(self.tm.ports)
        return {p: PortInfo(iface=f"port{p}") for p in sorted(ports)}

    def stats(self) -> dict:
        return {}
