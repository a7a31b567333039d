"""Link-level retry (LLR) on one link direction: the sender's replay buffer and the receiver's sequence check.

As in Ultra Ethernet's LLR and the SAI/SONiC model of it: every LLR-eligible frame takes the next link
sequence number and stays in a bounded replay buffer until the receiver acknowledges it; the receiver takes
frames strictly in order, acknowledges them coalesced (every `ack_every` frames, or `ack_delay_ns` after the
first one not yet acknowledged), NAKs the first gap it sees, drops what follows the gap and discards
duplicates. The sender goes back N on a NAK, or on its replay timer when nothing came back: it replays every
frame still buffered, oldest first. A frame replayed more than `max_replays` times is discarded (the next
frame then tells the receiver to resynchronise), and a frame that finds the buffer full goes out best effort,
without a sequence number.

The replay timer measures silence about the oldest frame still buffered: it starts when a frame goes into an
empty buffer and starts again whenever an ACK frees frames, so a frame sent after the previous ones were all
acknowledged gets a whole timeout of its own. While PFC pauses the port (`flow_held`), nothing can be said
about that silence — the peer asked for no data, and what it owes us may wait behind the pause — so an expiry
then replays nothing, and the release starts a whole timeout (as hardware stops the timer while its partner
pauses it). A NAK still replays at once: the peer names frames it dropped.

Both halves only call `put(frame)` (the port puts it on the wire after whatever is there) and a `Timer`; the
port (linklayer/port.py) wires a sender and the receiver of the reverse direction together.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from linklayer import shim
from linklayer.config import LlrConfig
from linklayer.counters import LinkCounters


class Timer(Protocol):
    """The clock a link-layer model runs on: vfabric's simulator, the emulated switch loop, the NIC's
    real-time scheduler (`traffic.scheduler.Scheduler` has both)."""

    def now_ns(self) -> int: ...

    def at(self, t_ns: int, fn: Callable[..., Any], *args: Any) -> Any: ...


class LlrSender:
    """The transmit half: sequence numbers, the replay buffer, go-back-N."""

    __slots__ = ("cfg", "timer", "put", "c", "next_seq", "buf", "buf_bytes", "deadline", "armed", "resync",
                 "timeout_ns", "held")

    def __init__(self, cfg: LlrConfig, timer: Timer, put: Callable[[bytes], Any], counters: LinkCounters,
                 loop_ns: int = 0) -> None:
        self.cfg = cfg
        # the replay timer runs `replay_timeout_ns` beyond the link's loop time (frame out, ACK back)
        self.timeout_ns = cfg.replay_timeout_ns + loop_ns
        self.timer = timer
        self.put = put
        self.c = counters
        self.next_seq = 0
        self.buf: deque[list[Any]] = deque()  # [seq, frame as first sent (without shim), replays]
        self.buf_bytes = 0
        self.deadline = 0  # the replay timer fires at this time unless an ACK moved it on
        self.armed = False  # a timer event is pending (it rereads `deadline` when it fires)
        self.resync = False  # frames were discarded: the next frame sent tells the receiver
        self.held = False  # flow control holds the port: the replay timer does not replay (`flow_held`)

    def wrap(self, frame: bytes) -> bytes:
        """The frame as it goes on the wire: with the next sequence number, kept for replay; or, when the
        replay buffer is full, best effort with a PLAIN shim (no number, never replayed)."""
        cfg = self.cfg
        n = len(frame)
        if len(self.buf) >= cfg.max_outstanding_frames or self.buf_bytes + n > cfg.max_outstanding_bytes:
            self.c.llr_tx_best_effort += 1
            return shim.add_shim(frame, 0, 0, shim.PLAIN)
        seq = self.next_seq
        self.next_seq = seq + 1
        if type(frame) is not bytes:  # a sender's reused buffer (the NIC's frame template): keep a copy
            frame = bytes(frame)
        buf = self.buf
        buf.append([seq, frame, 0])
        self.buf_bytes += n
        self.c.llr_tx_ok += 1
        if len(buf) == 1:  # the oldest unacknowledged frame now: its own whole timeout (a pending event
            self._arm(self.timer.now_ns() + self.timeout_ns)  # of an acknowledged frame rereads it)
        flags = 0
        if self.resync:
            self.resync = False
            flags = shim.FLAG_RESYNC
        return shim.add_shim(frame, seq, flags)

    def _arm(self, deadline: int) -> None:
        self.deadline = deadline
        if not self.armed:
            self.armed = True
            self.timer.at(deadline, self._fire)

    def _fire(self) -> None:
        self.armed = False
        if not self.buf or self.held:  # held: `flow_held(False)` arms a whole timeout again
            return
        now = self.timer.now_ns()
        if now < self.deadline:  # progress meanwhile: wait for the moved deadline
            self._arm(self.deadline)
            return
        self.c.llr_replay_timeouts += 1
        self._replay()

    def flow_held(self, on: bool) -> None:
        """Flow control holds the port (PFC paused a priority of it) or let it go. Held, the replay timer
        replays nothing (ACKs still free frames); let go, a whole timeout starts for what is still buffered."""
        if on == self.held:
            return
        self.held = on
        if not on and self.buf:
            self._arm(self.timer.now_ns() + self.timeout_ns)

    def _release(self, expected: int) -> None:
        """Everything before sequence `expected` arrived: out of the buffer."""
        buf = self.buf
        freed = False
        while buf and shim.seq_diff(buf[0][0], expected) < 0:
            self.buf_bytes -= len(buf.popleft()[1])
            freed = True
        if freed and buf:
            self.deadline = self.timer.now_ns() + self.timeout_ns

    def on_ack(self, expected: int) -> None:
        self.c.llr_rx_ack += 1
        self._release(expected)

    def on_nak(self, expected: int) -> None:
        self.c.llr_rx_nak += 1
        self._release(expected)
        if self.buf:
            if shim.seq_diff(self.buf[0][0], expected) > 0:
                self.resync = True  # the receiver waits for a frame discarded here: tell it to move on
            self._replay()

    def _replay(self) -> None:
        """Go back N: every buffered frame again, oldest first; the over-replayed are discarded instead."""
        c = self.c
        c.llr_replays += 1
        limit = self.cfg.max_replays
        keep: deque[list[Any]] = deque()
        for entry in self.buf:
            entry[2] += 1
            if entry[2] > limit:
                c.llr_tx_discard += 1
                self.buf_bytes -= len(entry[1])
                self.resync = True
                continue
            keep.append(entry)
            flags = 0
            if self.resync:
                self.resync = False
                flags = shim.FLAG_RESYNC
            c.llr_tx_replay += 1
            self.put(shim.add_shim(entry[1], entry[0], flags))
        self.buf = keep
        if keep:
            self.armed = False  # a pending event rereads the deadline; re-arming makes sure one exists
            self._arm(self.timer.now_ns() + self.timeout_ns)

    def flush(self) -> None:
        """The link went down: nothing buffered will be acknowledged (counted as discarded)."""
        self.c.llr_tx_discard += len(self.buf)
        if self.buf:
            self.resync = True
        self.buf.clear()
        self.buf_bytes = 0


class LlrReceiver:
    """The receive half: in-order acceptance, coalesced ACKs, one NAK per gap."""

    __slots__ = ("cfg", "timer", "put", "c", "src", "expected", "unacked", "ack_armed", "nak_for", "nak_at")

    def __init__(self, cfg: LlrConfig, timer: Timer, put: Callable[[bytes], Any], counters: LinkCounters,
                 src_mac: bytes) -> None:
        self.cfg = cfg
        self.timer = timer
        self.put = put
        self.c = counters
        self.src = src_mac
        self.expected = 0
        self.unacked = 0
        self.ack_armed = False
        self.nak_for = -1  # the sequence number last NAKed (no second NAK for it until the replay timeout)
        self.nak_at = 0

    def accept(self, flags: int, seq: int) -> bool:
        """Whether the data frame with `seq` goes up (True) or is dropped (out of order, duplicate)."""
        c = self.c
        d = shim.seq_diff(seq, self.expected)
        if d > 0 and flags & shim.FLAG_RESYNC:
            self.expected = seq  # the sender gave up on what came before: count it missing, carry on
            c.llr_rx_missing_seq += 1
            d = 0
        if d == 0:
            self.expected = seq + 1
            c.llr_rx_ok += 1
            self.unacked += 1
            if self.unacked >= self.cfg.ack_every:
                self._ack()
            elif not self.ack_armed:
                self.ack_armed = True
                self.timer.at(self.timer.now_ns() + self.cfg.ack_delay_ns, self._ack_due)
            return True
        if d < 0:
            c.llr_rx_duplicate_seq += 1
            self.unacked += 1  # the sender may have missed our ACK: tell it again
            if not self.ack_armed:
                self.ack_armed = True
                self.timer.at(self.timer.now_ns() + self.cfg.ack_delay_ns, self._ack_due)
            return False
        now = self.timer.now_ns()
        if self.nak_for != self.expected or now - self.nak_at >= self.cfg.replay_timeout_ns:
            self.nak_for, self.nak_at = self.expected, now
            c.llr_rx_missing_seq += 1
            c.llr_tx_nak += 1
            self.unacked = 0
            self.put(shim.control_frame(shim.NAK, self.expected, self.src))
        else:
            c.llr_rx_out_of_seq += 1
        return False

    def ack_now(self) -> None:
        """Acknowledge at once what is received but not yet acknowledged (the port stops answering: see
        `LinkPort.ack_now`)."""
        if self.unacked:
            self._ack()

    def _ack_due(self) -> None:
        self.ack_armed = False
        if self.unacked:
            self._ack()

    def _ack(self) -> None:
        self.unacked = 0
        self.c.llr_tx_ack += 1
        self.put(shim.control_frame(shim.ACK, self.expected, self.src))
