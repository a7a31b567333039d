"""A port out for switch-loop tests: it records every frame put on the wire, with its port and start time."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class WireLink:
    """The two link fields the switch loop reads: the rate it paces by and the count of frames lost on it."""

    rate_bps: float
    lost: int = 0


class Wire:
    """Stands where a vfabric channel would: `send` appends (port, frame bytes, start ns) to a shared log, so a test
    can compare what two pipelines put on the wires."""

    def __init__(self, port: int, log: list, rate_bps: float) -> None:
        self.port, self.log = port, log
        self.link = WireLink(rate_bps)

    def send(self, frame: bytes, start_ns: float) -> None:
        self.log.append((self.port, bytes(frame), start_ns))
