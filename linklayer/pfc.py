"""Priority flow control (IEEE 802.1Qbb), per port and priority, and its watchdog.

Receive side (`PfcBuffer`): the bytes a node holds for frames that came in on this port, by priority. Crossing
XOFF sends the peer a PFC frame pausing that priority for `quanta` × 512 bit times, re-sent at half that time
while the bytes stay above XON; falling to XON sends a pause of 0 quanta (resume). Frames still on the wire when
the pause lands fill the headroom above XOFF; a frame that would go beyond XOFF + headroom is dropped and
counted (`buffer_drops`): with headroom ≥ `headroom_bytes(...)` that never happens.

Transmit side (`PfcGate`): a paused priority sends nothing until its pause expires or a resume arrives (the
frame on the wire is finished, never cut). Paused time is counted. While any priority is paused the port is
held (`LinkSide.held`): LLR's replay timer then does not replay. The watchdog (`watchdog_ns` > 0) finds a
priority paused without a break for longer than the limit — a pause storm or a deadlock of cyclic buffer
dependencies, which never ends by itself — counts it, and ignores pauses on that priority for the same time,
as switches' PFC watchdogs do (their "forward" action): the queue drains into the peer, which drops what its
headroom cannot hold, and the cycle is broken.

The frame is the MAC control frame of 802.1Qbb: to 01-80-C2-00-00-01, EtherType 0x8808, opcode 0x0101, a class
enable vector and eight pause times, padded to the 60-byte minimum.
"""

from __future__ import annotations

import struct

from linklayer.config import PRIORITIES, PfcConfig
from linklayer.flow import FlowClock, FlowStats, LinkSide

MAC_CONTROL_TYPE = 0x8808
PFC_OPCODE = 0x0101
PFC_DST = bytes.fromhex("0180c2000001")
QUANTUM_BITS = 512
_HEAD = struct.Struct("!HHH8H")  # EtherType, opcode, class enable vector, 8 pause times
_TYPE_BYTES = MAC_CONTROL_TYPE.to_bytes(2, "big")


def pause_frame(src_mac: bytes, times: dict[int, int]) -> bytes:
    """A PFC frame from `src_mac` pausing priority p for `times[p]` quanta (0: resume)."""
    vector = 0
    quanta = [0] * PRIORITIES
    for prio, q in times.items():
        vector |= 1 << prio
        quanta[prio] = q
    frame = PFC_DST + src_mac + _HEAD.pack(MAC_CONTROL_TYPE, PFC_OPCODE, vector, *quanta)
    return frame + bytes(60 - len(frame))


def parse_pause(frame: bytes) -> dict[int, int] | None:
    """{priority: quanta} of a PFC frame, None for anything else."""
    if len(frame) < 14 + 20 or frame[12:14] != _TYPE_BYTES:
        return None
    _t, opcode, vector, *quanta = _HEAD.unpack_from(frame, 12)
    if opcode != PFC_OPCODE:
        return None
    return {p: quanta[p] for p in range(PRIORITIES) if vector >> p & 1}


def quanta_ns(quanta: int, rate_bps: float) -> float:
    return quanta * QUANTUM_BITS * 1e9 / rate_bps


def headroom_bytes(rate_bps: float, delay_ns: float, response_ns: float = 0.0, max_frame: int = 1542,
                   pause_frame_bytes: int = 84) -> int:
    """Headroom that makes a PFC priority lossless on a link: what the peer can still send between the frame
    that crosses XOFF and the last bit the peer sends after the pause reaches it. The pause waits behind one
    frame on the wire (max_frame), takes its own bytes and the cable delay to reach the peer, which takes
    `response_ns` to act (the receiving pipeline) and finishes the frame it has begun (max_frame); all that
    while, and for the cable delay back, bytes keep arriving at line rate. Wire bytes (preamble, FCS and gap
    included), a safe upper bound of the buffer bytes they occupy."""
    ns_per_byte = 8e9 / rate_bps
    in_flight_ns = 2 * delay_ns + response_ns + (2 * max_frame + pause_frame_bytes) * ns_per_byte
    return int(in_flight_ns / ns_per_byte) + 1


class PfcBuffer:
    """Receive side of one port: bytes held by priority, XOFF/XON towards the peer, drops beyond the headroom."""

    def __init__(self, cfg: PfcConfig, side: LinkSide, clock: FlowClock, rate_bps: float, mac: bytes,
                 stats: FlowStats) -> None:
        self.cfg = cfg
        self.side = side
        self.clock = clock
        self.mac = mac
        self.stats = stats
        self.lossless = [p in cfg.priorities for p in range(PRIORITIES)]
        self.held = [0] * PRIORITIES
        self.total = 0
        self.xoff = [False] * PRIORITIES
        self.limit = cfg.xoff_bytes + cfg.headroom_bytes
        self.refresh_ns = max(1, int(quanta_ns(cfg.quanta, rate_bps) / 2))

    def admit(self, prio: int, nbytes: int) -> bool:
        if not self.lossless[prio]:
            return True
        held = self.held[prio] + nbytes
        if held > self.cfg.xoff_bytes and not self.xoff[prio]:  # crossing XOFF pauses, admitted or not
            self.xoff[prio] = True
            self._pause(prio, self.cfg.quanta)
            self.clock.at(self.clock.now_ns() + self.refresh_ns, self._refresh, prio)
        if held > self.limit:
            self.stats.buffer_drops += 1
            return False
        self.held[prio] = held
        self.total += nbytes
        if self.total > self.stats.max_buffer_bytes:
            self.stats.max_buffer_bytes = self.total
        return True

    def release(self, prio: int, nbytes: int) -> None:
        if not self.lossless[prio]:
            return
        self.held[prio] -= nbytes
        self.total -= nbytes
        if self.xoff[prio] and self.held[prio] <= self.cfg.xon_bytes:
            self.xoff[prio] = False
            self._pause(prio, 0)

    def _pause(self, prio: int, quanta: int) -> None:
        self.stats.pause_frames += 1
        self.side.send_link_control(pause_frame(self.mac, {prio: quanta}))

    def _refresh(self, prio: int) -> None:
        """Still above XON half a pause later: pause again before the peer's timer runs out."""
        if self.xoff[prio]:
            self._pause(prio, self.cfg.quanta)
            self.clock.at(self.clock.now_ns() + self.refresh_ns, self._refresh, prio)


class PfcGate:
    """Transmit side of one port: which priorities the peer has paused, until when; the watchdog."""

    def __init__(self, cfg: PfcConfig, side: LinkSide, clock: FlowClock, rate_bps: float,
                 stats: FlowStats) -> None:
        self.cfg = cfg
        self.side = side
        self.clock = clock
        self.rate_bps = rate_bps
        self.stats = stats
        self.until = [0] * PRIORITIES      # paused until this clock ns (<= now: not paused)
        self.since = [-1] * PRIORITIES     # start of the current pause (-1: not paused)
        self.ignore_until = [0] * PRIORITIES  # watchdog: pauses on this priority ignored until then
        self.epoch = [0] * PRIORITIES      # bumped at every pause start, so stale timers know themselves
        self.paused = 0                    # priorities paused now: the port is held while any is

    def may_send(self, prio: int, nbytes: int) -> bool:
        return self.since[prio] < 0

    def sent(self, prio: int, nbytes: int) -> None:
        pass

    def on_control(self, frame: bytes) -> bool:
        times = parse_pause(frame)
        if times is None:
            return False
        self.stats.pause_received += 1
        now = self.clock.now_ns()
        for prio, quanta in times.items():
            if quanta == 0:
                if self.since[prio] >= 0:
                    self._resume(prio, now)
                continue
            if self.ignore_until[prio] > now:
                continue  # the watchdog released this priority for a while
            until = now + int(quanta_ns(quanta, self.rate_bps) + 0.5)
            self.until[prio] = until
            if self.since[prio] < 0:
                self.since[prio] = now
                self.epoch[prio] += 1
                self.paused += 1
                if self.paused == 1:
                    self.side.held(True)
                if self.cfg.watchdog_ns:
                    self.clock.at(now + self.cfg.watchdog_ns, self._watchdog, prio, self.epoch[prio])
            self.clock.at(until, self._expire, prio, until)
        return True

    def _expire(self, prio: int, until: int) -> None:
        if self.since[prio] >= 0 and self.until[prio] == until:
            self._resume(prio, self.clock.now_ns())

    def _resume(self, prio: int, now: int) -> None:
        self.stats.paused_ns += now - self.since[prio]
        self.since[prio] = -1
        self.until[prio] = 0
        self.paused -= 1
        if not self.paused:
            self.side.held(False)  # before the wake: LLR's timer restarts ahead of the frames let go
        self.side.wake()

    def _watchdog(self, prio: int, epoch: int) -> None:
        """Paused without a break since `watchdog_ns` ago: a storm or a deadlock. Count it, let the priority
        go and ignore its pauses for as long again."""
        if self.since[prio] < 0 or self.epoch[prio] != epoch:
            return
        now = self.clock.now_ns()
        self.stats.watchdog_storms += 1
        self.ignore_until[prio] = now + self.cfg.watchdog_ns
        self._resume(prio, now)

    def close(self) -> None:
        """End of run: count the pauses still open."""
        now = self.clock.now_ns()
        for prio in range(PRIORITIES):
            if self.since[prio] >= 0:
                self.stats.paused_ns += now - self.since[prio]
                self.since[prio] = now
