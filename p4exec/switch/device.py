"""The switch device: what the P4Runtime server (and anything else in-process) drives.

The interface is the one in docs/architecture.md ("The switch device"). Every change to
what the data plane sees runs on the data-plane thread via `DataPlane.call`, so the
packet loop needs no locks.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from p4exec.p4runtime import backend
from p4exec.switch.dataplane import DataPlane
from p4exec.switch.program import load_program, make_live
from p4exec.switch.tm import QueueConfig

T = TypeVar("T")


@dataclass(frozen=True)
class PortInfo:
    iface: str
    up: bool
    gone: bool


class SwitchDevice:
    """Program + state + ports + traffic manager + packet-in/out + port status of one switch."""

    def __init__(self, dataplane: DataPlane, device_id: int = 0, seed: int = 0) -> None:
        self.dp = dataplane
        self.device_id = device_id
        self.seed = seed
        self._digest: list[Callable[[int, list], None]] = []

    @property
    def cpu_port(self) -> int | None:
        return self.dp.cpu_port

    @property
    def program(self) -> Any:
        """The committed `p4exec.p4runtime.backend.Program` (p4info, config, state, pipeline) or None."""
        live = self.dp.live
        return None if live is None else live.program

    # ---------------------------------------------------------------- pipeline

    def load_config(self, p4info: Any, device_config: bytes) -> Any:
        """Compile and check a pipeline without touching the live one (VERIFY)."""
        return load_program(device_config, p4info=p4info, seed=self.seed)

    def commit(self, program: Any) -> None:
        """Make `program` the live pipeline; packets already queued finish on the old one."""
        backend.attach_digest_sink(program, self._emit_digest)
        live = make_live(program)
        self.dp.call(lambda: self.dp.commit(live))

    def control(self, fn: Callable[[], T]) -> T:
        """Run a control-plane change on the data-plane thread, between two packets.

        No time bound: a DATAPLANE_ATOMIC batch of 20k updates takes seconds, and giving up
        would leave it running anyway (the loop would still execute it later)."""
        return self.dp.call(fn, timeout=None)

    def add_digest_listener(self, fn: Callable[[int, list], None]) -> None:
        """fn(digest_id, values) for every digest() the program executes (data-plane thread)."""
        self._digest.append(fn)

    def _emit_digest(self, digest_id: int, values: list) -> None:
        for fn in list(self._digest):
            fn(digest_id, values)

    # ---------------------------------------------------------------- packet I/O

    def packet_out(self, frame: bytes) -> None:
        cpu = self.dp.cpu_port
        if cpu is None:
            raise ValueError("switch has no CPU port (--cpu-port)")
        self.dp.post(lambda: self.dp.inject(cpu, bytes(frame)))

    def add_packet_in_listener(self, fn: Callable[[bytes], None]) -> None:
        self.dp.packet_in_listeners.append(fn)

    def remove_packet_in_listener(self, fn: Callable[[bytes], None]) -> None:
        if fn in self.dp.packet_in_listeners:
            self.dp.packet_in_listeners.remove(fn)

    # ---------------------------------------------------------------- queues

    def set_queue(
        self, port: int, depth: int | None = None, rate_pps: float | None = None, rate_bps: float | None = None
    ) -> QueueConfig:
        """BMv2's set_queue_depth / set_queue_rate for one egress port (rates 0 = unlimited)."""
        cfg = self.dp.call(lambda: self.dp.tm.configure(port, depth=depth, rate_pps=rate_pps, rate_bps=rate_bps))
        return QueueConfig(cfg.depth, cfg.rate_pps, cfg.rate_bps)

    def queue_config(self, port: int) -> QueueConfig:
        cfg = self.dp.tm.port(port).config
        return QueueConfig(cfg.depth, cfg.rate_pps, cfg.rate_bps)

    # ---------------------------------------------------------------- ports and stats

    def port_status(self) -> dict[int, PortInfo]:
        dp = self.dp
        return {n: PortInfo(p.iface, p.up, n in dp.gone) for n, p in sorted(dp.ports.items())}

    def add_port_listener(self, fn: Callable[[int, bool], None]) -> None:
        self.dp.port_listeners.append(fn)

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
