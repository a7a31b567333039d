"""The link-layer port: what sits between a sender's port-out and the wire, and between the wire and a
receiver's input (a switch port before P4, a host NIC port before the transport), for one port of one link.

The seam, for every layer that uses it:

* **Where it sits.** One `LinkPort` per port end of a link: it transmits on the port's outgoing direction
  (`send`, in place of the wire's own `send(frame, start_ns)`) and takes the frames of the incoming direction
  (`receive(frame)`, before anything else sees them). It is written once against a `Timer` (`now_ns`, `at`):
  vfabric's simulator, the emulated switch loop, the NIC's real-time scheduler.
* **Absent means nothing.** Nobody builds a LinkPort unless `LinkLayerConfig.active`; without one every
  data path is byte-for-byte what it was (virtual-time records pinned by tests/snapshots).
* **Link errors** (linklayer/errors.py): each arriving frame may fail its FCS (`rx_bad`), decided per
  receiving port and frame index from the run's seed; `name` ("node:port") is that port's identity.
* **LLR** (linklayer/llr.py): data frames get a sequence-number shim on the way out and lose it on the way in;
  ACK/NAK control frames go back on the reverse direction, ahead of data. The shim's bytes are real bytes on
  the wire, so both clocks pay for them (linklayer/shim.py).
* **Hooks for flow control (PFC, CBFC)**:
  - `send_control(frame)`: a link control frame to the peer, on the wire before any further data;
  - `control_handlers[ethertype] = fn(frame)`: frames of that EtherType arriving here are consumed by `fn`
    (a pause or a credit update from the peer), never passed up;
  - `gate` (a `FlowGate`): `may_send(priority, nbytes)` asks it whether the transmit side may start a frame
    of that priority now (the traffic manager or NIC asks before dequeuing); when a held priority may go again
    the gate calls `resumed(priority)`, which tells the `resume_listeners` (the TM's or NIC's kick);
  - `flow_held(on)`: PFC holds the port (a priority paused) or let it go: LLR's replay timer does not replay
    meanwhile (linklayer/llr.py);
  - `rx_listeners`: called with every frame this port passes up (after FCS and LLR), for per-priority
    receive accounting.
* **Wire time.** When the port puts its own frames (control, replay) on a wire that reports when a frame's
  last bit leaves (vfabric's channel, a NIC's pacing), later frames start after them, and `hold(end)` tells
  the sender's pacing (the traffic manager) that the wire is busy until `end`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from linklayer import shim
from linklayer.config import LinkLayerConfig
from linklayer.counters import LinkCounters
from linklayer.errors import FrameErrors
from linklayer.llr import LlrReceiver, LlrSender, Timer

WIRE_OVERHEAD = 8 + 4 + 12  # preamble+SFD, FCS, inter-frame gap: what a frame costs beyond its bytes


def wire_bytes(frame_len: int) -> int:
    return max(frame_len, shim.MIN_FRAME) + WIRE_OVERHEAD


class Wire(Protocol):
    """One direction of a link as its sender sees it: `send(frame, start_ns)` returns when the frame's last
    bit leaves (fractional ns) where the wire knows it, or a truth value (a socket: sent or not)."""

    def send(self, frame: bytes, start_ns: float) -> Any: ...


class FlowGate(Protocol):
    """Flow control on a port's transmit side (PFC: paused priorities; CBFC: credits per virtual channel).
    The transmitting side (traffic manager, NIC) asks `LinkPort.may_send(priority, nbytes)` before it starts
    a frame and calls `gate.sent(priority, nbytes)` once it did (only it knows the frame's priority); the gate
    calls `LinkPort.resumed(priority)` when a held priority may go again."""

    def may_send(self, priority: int, nbytes: int) -> bool: ...

    def sent(self, priority: int, nbytes: int) -> None: ...


class LinkPort:
    """One port end of a link with the link layer on (see the module docstring for the seam)."""

    def __init__(self, config: LinkLayerConfig, timer: Timer, wire: Wire, name: str, seed: int = 0,
                 mac: bytes = b"\x02\x00\x00\x00\x00\x00", errors: bool = True, loop_ns: int = 0) -> None:
        """`name`: this port's identity ("node:port", its link errors are keyed by it); `loop_ns`: the link's
        loop time where it is known (a frame out and its ACK back: propagation both ways, the peer's
        pipeline), added to the LLR replay timeout."""
        self.config = config
        self.timer = timer
        self.wire = wire
        self.name = name
        self.counters = LinkCounters()
        self.busy = 0.0  # when the last frame this port put on a timed wire ends (fractional ns)
        self.hold: Callable[[float], None] | None = None
        self.gate: FlowGate | None = None
        self.control_handlers: dict[int, Callable[[bytes], None]] = {}
        self.rx_listeners: list[Callable[[bytes], None]] = []
        self.resume_listeners: list[Callable[[int], None]] = []
        fer = config.frame_error_rate or config.bit_error_rate
        self.errors = FrameErrors(seed, name, config.frame_error_probability) if fer and errors else None
        llr = config.llr
        self.tx = LlrSender(llr, timer, self._put, self.counters, loop_ns) if llr.enabled else None
        self.rx = LlrReceiver(llr, timer, self._put, self.counters, mac) if llr.enabled else None

    def __getattr__(self, attr: str) -> Any:
        """What the sender asks of its wire besides `send` (rate, link) is the wire's."""
        if attr == "wire":
            raise AttributeError(attr)
        return getattr(self.wire, attr)

    # ---------------------------------------------------------------- transmit
    def _start(self, start_ns: float) -> float:
        busy = self.busy
        return busy if busy > start_ns else start_ns

    def _put(self, frame: bytes) -> None:
        """A frame of the port's own (control, replay) on the wire now, after what is already on it."""
        now = self.timer.now_ns()
        try:
            end = self.wire.send(frame, self._start(float(now)))
        except Exception:  # noqa: BLE001 - a frame the wire refused is lost like a corrupted one (LLR's timer)
            self.counters.tx_refused += 1
            return
        if type(end) is float:
            self.busy = end
            if self.hold is not None:
                self.hold(end)

    def send(self, frame: bytes, start_ns: float) -> Any:
        """A data frame from the sender (switch egress, NIC) that would start at `start_ns`."""
        tx = self.tx
        if tx is not None:
            frame = tx.wrap(frame)
        end = self.wire.send(frame, self._start(start_ns))
        if type(end) is float:
            self.busy = end
            if self.hold is not None:
                self.hold(end)
        return end

    def send_control(self, frame: bytes) -> None:
        """A link control frame (PFC pause, CBFC credit update) to the peer, before any further data."""
        self.counters.control_tx += 1
        self._put(frame)

    def may_send(self, priority: int, nbytes: int) -> bool:
        gate = self.gate
        return True if gate is None else gate.may_send(priority, nbytes)

    def resumed(self, priority: int) -> None:
        for fn in self.resume_listeners:
            fn(priority)

    def flow_held(self, on: bool) -> None:
        """The peer's flow control holds this port's transmit side (or let it go): LLR's replay timer waits."""
        if self.tx is not None:
            self.tx.flow_held(on)

    def ack_now(self) -> None:
        """The node stops running this port's link layer while its peer goes on (the emulated engine at the
        end of a run): acknowledge what it received, so the peer does not replay into silence until it
        discards frames this port already has."""
        if self.rx is not None:
            self.rx.ack_now()

    def link_down(self) -> None:
        """Carrier lost: the replay buffer cannot be acknowledged any more."""
        if self.tx is not None:
            self.tx.flush()

    # ---------------------------------------------------------------- receive
    def receive(self, frame: bytes) -> bytes | None:
        """A frame's last bit arrived: the frame to pass up, or None (bad FCS, LLR control, out of order,
        duplicate, flow control)."""
        errors = self.errors
        if errors is not None and errors.bad(wire_bytes(len(frame))):
            self.counters.rx_bad += 1
            return None
        rx = self.rx
        if rx is not None and frame[12:14] == b"\x88\xb6":  # with LLR on, every frame from the peer is shimmed
            kind, flags, seq = shim.parse(frame)
            if kind == shim.DATA:
                if not rx.accept(flags, seq):
                    return None
                frame = shim.strip(frame)
            elif kind == shim.PLAIN:
                frame = shim.strip(frame)
            else:
                tx = self.tx
                if tx is not None:
                    (tx.on_ack if kind == shim.ACK else tx.on_nak)(seq)
                return None
        elif self.control_handlers:
            fn = self.control_handlers.get(int.from_bytes(frame[12:14], "big"))
            if fn is not None:
                self.counters.control_rx += 1
                fn(frame)
                return None
        for listen in self.rx_listeners:
            listen(frame)
        return frame
