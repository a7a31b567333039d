"""What PFC and CBFC need from the port they sit on, and what they give it: the flow-control seam.

A flow-controlled port has two halves. Its *transmit gate* (`TxGate`) decides whether a frame of a priority may
start now (PFC: is the priority paused? CBFC: are there credits for the whole frame?) and hears of every frame
that left; the transmitter (a switch's traffic manager, a host NIC) asks it before each frame and is woken
(`LinkSide.wake`) when a held priority may go again. PFC also tells the port when its pauses begin and end
(`LinkSide.held`), for LLR's replay timer. Its *receive buffer* (`RxBuffer`) accounts the frames that
came in on the port by priority until they leave the node: PFC decides on those bytes when to pause the peer,
CBFC returns their cells to it as credits. Both talk to the peer with link control frames (`LinkSide.
send_link_control`), which the receiving port takes out of the frame stream before any P4 sees them (`on_control`).

Written once against a clock with `now_ns()` and `at(t_ns, fn, *args)` (both schedulers have them), so the same
objects run in virtual time and in emulation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Protocol


class FlowClock(Protocol):
    """Time for flow control: the node's scheduler."""

    def now_ns(self) -> int: ...

    def at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> Any: ...


class LinkSide(Protocol):
    """The port a flow-control state machine belongs to."""

    def send_link_control(self, frame: bytes) -> None:
        """Put a link control frame on the wire to the peer, ahead of queued data (after the frame on the wire)."""

    def wake(self) -> None:
        """A held priority may transmit again: the port's transmitter should look at its queues."""

    def held(self, on: bool) -> None:
        """The peer's pauses hold the port (on: the first paused priority; off: the last one let go): LLR's
        replay timer must not take the silence of a paused link for a loss (linklayer/llr.py)."""


class TxGate(Protocol):
    """The transmit half: consulted before each frame, told of each frame sent, fed the peer's control frames."""

    def may_send(self, prio: int, nbytes: int) -> bool: ...

    def sent(self, prio: int, nbytes: int) -> None: ...

    def on_control(self, frame: bytes) -> bool: ...


class RxBuffer(Protocol):
    """The receive half: frames of a priority held in the node's buffer on behalf of this ingress port."""

    def admit(self, prio: int, nbytes: int) -> bool: ...

    def release(self, prio: int, nbytes: int) -> None: ...


@dataclass
class FlowStats:
    """Per port and direction; summed into the run's `link_layer` totals. Times in ns."""

    pause_frames: int = 0        # PFC frames this port sent (XOFF and XON)
    pause_received: int = 0      # PFC frames it obeyed
    paused_ns: int = 0           # time its transmitter had a priority paused (summed over priorities)
    credit_updates: int = 0      # CBFC credit updates it sent
    credit_updates_received: int = 0
    credit_stall_ns: int = 0     # time a VC had a frame waiting without the credits for it (summed over VCs)
    buffer_drops: int = 0        # frames refused at its ingress buffer (beyond XOFF + headroom)
    watchdog_storms: int = 0     # priorities the PFC watchdog found paused too long (and released)
    max_buffer_bytes: int = 0    # most bytes ever held for this ingress port (all priorities)

    def add(self, other: FlowStats) -> None:
        for f in fields(self):
            if f.name == "max_buffer_bytes":
                self.max_buffer_bytes = max(self.max_buffer_bytes, other.max_buffer_bytes)
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, int]:
        return {f.name: int(getattr(self, f.name)) for f in fields(self)}


#: the run totals the `link_layer` object of metrics.json carries for flow control
TOTALS = ("pause_frames", "paused_ns", "credit_stall_ns", "buffer_drops")


class PortFlow:
    """Flow control of one port: its gate (towards the peer), its receive buffer (from the peer), and the control
    frames it understands. `close(now)` ends open pause and stall intervals so their time is counted."""

    def __init__(self, gate: Any, rx: Any, stats: FlowStats) -> None:
        self.gate = gate
        self.rx = rx
        self.stats = stats
        self.counters: Any = None  # the LinkPort's LinkCounters, brought up to date by `close`

    def on_control(self, frame: bytes) -> bool:
        """A link control frame from the peer: True if it was ours (a pause, a credit update)."""
        return bool(self.gate.on_control(frame))

    def take_control(self, frame: bytes) -> None:
        self.gate.on_control(frame)

    def consumed(self, prio: int, nbytes: int) -> None:
        """A frame received and consumed at once (a host NIC): held and freed in the same instant."""
        rx = self.rx
        if rx is not None and rx.admit(prio, nbytes):
            rx.release(prio, nbytes)

    def close(self) -> None:
        """Count open pauses and stalls up to now, and copy the totals into the port's LinkCounters (the
        links.csv columns and the run's `link_layer` totals)."""
        self.gate.close()
        c, st = self.counters, self.stats
        if c is not None:
            c.pause_tx, c.paused_ns, c.credit_stall_ns = st.pause_frames, st.paused_ns, st.credit_stall_ns
            c.buffer_drops, c.watchdog_storms = st.buffer_drops, st.watchdog_storms
