"""Flow control for one port from the run's `link_layer` settings: PFC, CBFC or nothing.

The node (switch loop, host NIC) calls `port_flow` once per port and then only uses the `PortFlow` it got; it
hands every received frame that `is_link_control` says is a flow-control frame to `PortFlow.on_control` instead
of its pipeline.
"""

from __future__ import annotations

from linklayer.cbfc import CBFC_TYPE, CbfcBuffer, CbfcGate
from linklayer.config import LinkLayerConfig
from linklayer.flow import FlowClock, FlowStats, LinkSide, PortFlow
from linklayer.pfc import MAC_CONTROL_TYPE, PfcBuffer, PfcGate

_CONTROL_TYPES = (MAC_CONTROL_TYPE.to_bytes(2, "big"), CBFC_TYPE.to_bytes(2, "big"))


def is_link_control(frame: bytes) -> bool:
    """A PFC or CBFC frame: consumed by the receiving port, never seen by P4 or a host's stack."""
    return frame[12:14] in _CONTROL_TYPES


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
