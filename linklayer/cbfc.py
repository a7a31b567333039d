"""Credit-based flow control per virtual channel (the CBFC of Ultra Ethernet 1.0 §5.2, in ethlab's own form).

The receiver's buffer holds `credits` cells of `cell_bytes` per VC (priorities map to VCs by `vc_map`). The sender
starts with all of them and sends a frame only when the credits it has left cover the whole frame
(⌈wire bytes / cell⌉ cells); the frame's cells come back when the frame leaves the receiver's buffer. Nothing is
ever dropped for want of room: a frame without credits waits at the sender (`credit_stall_ns` counts how long).
Unlike a PFC pause, a credit stall does not hold LLR's replay timer (`LinkSide.held`): the cells of a corrupted
frame and of those its receiver dropped behind the gap come back only once a replay delivers them, so a stall
may be waiting for the very replay — held, with the NAK lost too, it would never end.

Credits come back in credit update messages sent on a fixed grid of `update_interval_ns` while anything was freed
(and twice more after the last change). An update carries, per VC, the *absolute* count of cells the receiver has
freed since the link came up (mod 2³²), not an increment: the sender's credits are `credits − (cells sent − cells
freed)`, so an update lost to a corrupted frame costs nothing but time — the next one carries everything.

Update frame (docs/ethplus-header.md): a MAC control frame like PFC's — to 01-80-C2-00-00-01 (never forwarded by
a bridge), EtherType 0x8808 — with opcode 0x0105 (ethlab's, not an IEEE assignment), version 1, VC count, cell
size, then one 32-bit freed-cell counter per VC; 60 bytes. Sharing PFC's EtherType keeps one link-control type
for the receiving port to take out of the stream (LLR's shim has 0x88B6).
"""

from __future__ import annotations

import struct

from linklayer.config import PRIORITIES, CbfcConfig
from linklayer.flow import FlowClock, FlowStats, LinkSide

CBFC_TYPE = 0x8808  # MAC control, as PFC
CBFC_OPCODE = 0x0105
CBFC_DST = bytes.fromhex("0180c2000001")
CBFC_VERSION = 1
_HEAD = struct.Struct("!HHBBH")  # EtherType, opcode, version, VC count, cell bytes
_COUNTERS = struct.Struct("!8I")
_TYPE_BYTES = CBFC_TYPE.to_bytes(2, "big")
WRAP = 1 << 32
REPEATS = 2  # updates sent after the last change, so that a lost last update is repaired too


def credit_frame(src_mac: bytes, cell_bytes: int, freed: list[int]) -> bytes:
    frame = (CBFC_DST + src_mac + _HEAD.pack(CBFC_TYPE, CBFC_OPCODE, CBFC_VERSION, PRIORITIES, cell_bytes)
             + _COUNTERS.pack(*(c % WRAP for c in freed)))
    return frame + bytes(max(0, 60 - len(frame)))


def parse_credits(frame: bytes) -> list[int] | None:
    """The per-VC freed-cell counters of a credit update, None for anything else."""
    if len(frame) < 12 + _HEAD.size + _COUNTERS.size or frame[12:14] != _TYPE_BYTES:
        return None
    _t, opcode, version, nvc, _cell = _HEAD.unpack_from(frame, 12)
    if opcode != CBFC_OPCODE or version != CBFC_VERSION or nvc != PRIORITIES:
        return None
    return list(_COUNTERS.unpack_from(frame, 12 + _HEAD.size))


def cells(nbytes: int, cell_bytes: int) -> int:
    return -(-nbytes // cell_bytes)


class CbfcBuffer:
    """Receive side: cells held per VC; freed cells counted and returned in periodic updates."""

    def __init__(self, cfg: CbfcConfig, side: LinkSide, clock: FlowClock, mac: bytes, stats: FlowStats) -> None:
        self.cfg = cfg
        self.side = side
        self.clock = clock
        self.mac = mac
        self.stats = stats
        self.vc = list(cfg.vc_map)
        self.held = [0] * PRIORITIES     # cells in the buffer per VC
        self.total = 0                   # bytes in the buffer
        self.freed = [0] * PRIORITIES    # cells freed since the start, per VC (absolute)
        self.pending = False             # an update tick is scheduled
        self.repeats = 0

    def admit(self, prio: int, nbytes: int) -> bool:
        vc = self.vc[prio]
        need = cells(nbytes, self.cfg.cell_bytes)
        if self.held[vc] + need > self.cfg.credits:  # the sender overran its credits: never with a correct peer
            self.stats.buffer_drops += 1
            return False
        self.held[vc] += need
        self.total += nbytes
        if self.total > self.stats.max_buffer_bytes:
            self.stats.max_buffer_bytes = self.total
        return True

    def release(self, prio: int, nbytes: int) -> None:
        vc = self.vc[prio]
        need = cells(nbytes, self.cfg.cell_bytes)
        self.held[vc] -= need
        self.total -= nbytes
        self.freed[vc] += need
        self.repeats = REPEATS
        if not self.pending:
            self._schedule()

    def _schedule(self) -> None:
        step = self.cfg.update_interval_ns
        self.pending = True
        self.clock.at((self.clock.now_ns() // step + 1) * step, self._tick)

    def _tick(self) -> None:
        self.pending = False
        self.stats.credit_updates += 1
        self.side.send_link_control(credit_frame(self.mac, self.cfg.cell_bytes, self.freed))
        if self.repeats > 0:
            self.repeats -= 1
            self._schedule()


class CbfcGate:
    """Transmit side: cells sent and cells the peer says it freed, per VC; a frame goes only with credits."""

    def __init__(self, cfg: CbfcConfig, side: LinkSide, clock: FlowClock, stats: FlowStats) -> None:
        self.cfg = cfg
        self.side = side
        self.clock = clock
        self.stats = stats
        self.vc = list(cfg.vc_map)
        self.used = [0] * PRIORITIES       # cells sent (absolute)
        self.freed = [0] * PRIORITIES      # cells the peer has freed (absolute, from the latest update)
        self.stalled = [-1] * PRIORITIES   # since when a VC has waited for credits (-1: it has not)

    def credits(self, vc: int) -> int:
        return self.cfg.credits - (self.used[vc] - self.freed[vc])

    def may_send(self, prio: int, nbytes: int) -> bool:
        vc = self.vc[prio]
        if self.cfg.credits - (self.used[vc] - self.freed[vc]) >= cells(nbytes, self.cfg.cell_bytes):
            return True
        if self.stalled[vc] < 0:
            self.stalled[vc] = self.clock.now_ns()
        return False

    def sent(self, prio: int, nbytes: int) -> None:
        self.used[self.vc[prio]] += cells(nbytes, self.cfg.cell_bytes)

    def on_control(self, frame: bytes) -> bool:
        counters = parse_credits(frame)
        if counters is None:
            return False
        self.stats.credit_updates_received += 1
        now = self.clock.now_ns()
        more = False
        for vc in range(PRIORITIES):
            # the counter wraps at 2^32: move forward by its distance from what we know, never past what we sent
            ahead = (counters[vc] - self.freed[vc]) % WRAP
            if ahead and self.freed[vc] + ahead <= self.used[vc]:
                self.freed[vc] += ahead
                if self.stalled[vc] >= 0:
                    self.stats.credit_stall_ns += now - self.stalled[vc]
                    self.stalled[vc] = -1
                    more = True
        if more:
            self.side.wake()
        return True

    def close(self) -> None:
        now = self.clock.now_ns()
        for vc in range(PRIORITIES):
            if self.stalled[vc] >= 0:
                self.stats.credit_stall_ns += now - self.stalled[vc]
                self.stalled[vc] = now
