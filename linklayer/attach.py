"""Flow control for one port from the run's `link_layer` settings: PFC, CBFC or nothing.

The node (switch loop, host NIC) calls `port_flow` once per port and then only uses the `PortFlow` it got; it
hands every received frame that `is_link_control` says is a flow-control frame to `PortFlow.on_control` instead
of its pipeline.
"""

from __future__ import annotations

from collections.abc import Callable

from linklayer.cbfc import CBFC_TYPE, CbfcBuffer, CbfcGate
from linklayer.config import LinkLayerConfig
from linklayer.flow import FlowClock, FlowStats, LinkSide, PortFlow
from linklayer.pfc import MAC_CONTROL_TYPE, PfcBuffer, PfcGate
from linklayer.port import LinkPort

_CONTROL_TYPE = MAC_CONTROL_TYPE.to_bytes(2, "big")
assert CBFC_TYPE == MAC_CONTROL_TYPE  # one link-control EtherType for the receiving port to take out


def is_link_control(frame: bytes) -> bool:
    """A PFC or CBFC frame (MAC control): consumed by the receiving port, never seen by P4 or a host's stack."""
    return frame[12:14] == _CONTROL_TYPE


def port_flow(cfg: LinkLayerConfig, side: LinkSide, clock: FlowClock, rate_bps: float, mac: bytes,
              host: bool = False) -> PortFlow | None:
    """The port's gate and receive buffer, or None when flow control is off. `host`: the port is a host NIC's,
    whose receive buffer is the host's memory — it never pauses its peer, and returns CBFC credits as soon as a
    frame is in (the frame is consumed on arrival)."""
    stats = FlowStats()
    if cfg.flow_control == "pfc":
        gate = PfcGate(cfg.pfc, side, clock, rate_bps, stats)
        return PortFlow(gate, None if host else PfcBuffer(cfg.pfc, side, clock, rate_bps, mac, stats), stats)
    if cfg.flow_control == "cbfc":
        return PortFlow(CbfcGate(cfg.cbfc, side, clock, stats), CbfcBuffer(cfg.cbfc, side, clock, mac, stats), stats)
    return None


class LinkPortSide:
    """A `LinkSide` over part 1's `LinkPort` (linklayer/port.py): control frames through its `send_control`
    (after its own replays and ACKs, on its wire time), `wake` to the node's transmitter, `held` to the port's
    LLR sender."""

    __slots__ = ("port", "wake_fn")

    def __init__(self, port: LinkPort, wake: Callable[[], None]) -> None:
        self.port = port
        self.wake_fn = wake

    def send_link_control(self, frame: bytes) -> None:
        self.port.send_control(frame)

    def wake(self) -> None:
        self.wake_fn()

    def held(self, on: bool) -> None:
        self.port.flow_held(on)


def on_link_port(cfg: LinkLayerConfig, port: LinkPort, clock: FlowClock, rate_bps: float, mac: bytes,
                 wake: Callable[[], None], host: bool = False) -> PortFlow | None:
    """Flow control on a `LinkPort`: its gate asks ours, and it hands us the MAC control frames it receives
    (after its FCS check and LLR, so a corrupted credit update is simply lost — the next one repairs it)."""
    pf = port_flow(cfg, LinkPortSide(port, wake), clock, rate_bps, mac, host)
    if pf is not None:
        port.gate = pf.gate
        port.control_handlers[MAC_CONTROL_TYPE] = pf.take_control
        pf.counters = port.counters
    return pf
