"""The link layer's bytes on the wire: the LLR shim on data frames and the LLR control frame (ACK/NAK).

Both use the IEEE 802 *local experimental EtherType 2* (0x88B6): a value reserved for exactly this kind of
link-local protocol, never assigned to a product, and distinct from 0x88B5 (local experimental 1), which the
ETH+ header of p4src/ already uses. The sending port adds the shim after the two MAC addresses and the
receiving port takes it off before anything else (P4 included) sees the frame, so it never leaves the link.
docs/ethplus-header.md says why a shim and what it costs.

    data:    dst(6) src(6) 0x88B6 kind=DATA flags seq(4) | original EtherType and payload   (+8 bytes)
    control: 01-80-C2-00-00-0E src(6) 0x88B6 kind=ACK|NAK 0 seq(4) | zero padding to 60 bytes

An ACK or NAK carries the receiver's next expected sequence number (everything before it arrived).

ethlab's in-network aggregation frames (p4src/include/inc_headers.p4) use 0x88B6 too. So on a link running
LLR every data frame carries the shim: a frame LLR does not cover (the replay buffer was full) goes out with
kind PLAIN, which the receiver only strips; and a port without LLR never reads 0x88B6 as the shim. Both
stay unambiguous whatever the frame's own EtherType.
"""

from __future__ import annotations

import struct

ETHERTYPE_LLR = 0x88B6
SHIM_BYTES = 8
MIN_FRAME = 60  # without FCS
DATA, ACK, NAK, PLAIN = 1, 2, 3, 4  # PLAIN: a data frame LLR does not cover (best effort)
FLAG_RESYNC = 0x01  # the sender discarded frames before this one: the receiver takes its number as expected
SEQ_MASK = 0xFFFFFFFF
#: the "nearest bridge" group address: link-local, no bridge forwards it
CONTROL_DST = bytes.fromhex("0180c200000e")

_SHIM = struct.Struct("!HBBI")
_ETHERTYPE_LLR = ETHERTYPE_LLR.to_bytes(2, "big")


def add_shim(frame: bytes, seq: int, flags: int = 0, kind: int = DATA) -> bytes:
    """`frame` with the LLR data shim carrying `seq` after its MAC addresses."""
    return frame[:12] + _SHIM.pack(ETHERTYPE_LLR, kind, flags, seq & SEQ_MASK) + frame[12:]


def control_frame(kind: int, seq: int, src: bytes) -> bytes:
    """An ACK or NAK carrying the next expected sequence number, padded to the minimum frame."""
    head = CONTROL_DST + src + _SHIM.pack(ETHERTYPE_LLR, kind, 0, seq & SEQ_MASK)
    return head + bytes(MIN_FRAME - len(head))


def is_llr(frame: bytes) -> bool:
    return frame[12:14] == _ETHERTYPE_LLR


def parse(frame: bytes) -> tuple[int, int, int]:
    """(kind, flags, seq) of a frame that `is_llr`."""
    _et, kind, flags, seq = _SHIM.unpack_from(frame, 12)
    return kind, flags, seq


def strip(frame: bytes) -> bytes:
    """The data frame as it was before `add_shim`."""
    return frame[:12] + frame[12 + SHIM_BYTES:]


def seq_diff(a: int, b: int) -> int:
    """a - b in 32-bit serial-number arithmetic (negative: a is before b)."""
    d = (a - b) & SEQ_MASK
    return d - (1 << 32) if d & 0x80000000 else d
