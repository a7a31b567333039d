"""INC frames on the wire, byte for byte as p4src/include/inc_headers.p4 declares them.

`Ethernet (0x88B6) | ETH+ 12 B | inc 20 B | INC_ELEMS x 32-bit elements`; one struct pack per frame and the
elements as one numpy buffer, because an endpoint packs and parses one frame per chunk.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

ETHERTYPE_INC = 0x88B6
ELEMS = 256  # INC_ELEMS, the program's default
SLOTS = 256  # INC_SLOTS: slots per switch
MAX_CONTRIBUTORS = 64  # bitmap width: contributors one switch counts per slot
HEADER_BYTES = 14 + 12 + 20
FRAME_BYTES = HEADER_BYTES + 4 * ELEMS

# ETH+ header fields an INC frame carries (docs/ethplus-header.md): version 1, pkt_type data, ect 0.
_ETHPLUS_VERSION = 1
_HDR = struct.Struct("!6s6sH" "BBBBHHI" "HHBBHIQ")

#: inc_events counter indices (p4src/include/inc_headers.p4)
EVENTS = ("absorbed", "completed", "duplicate", "replayed", "result_down", "unknown_job", "not_member",
          "bad_slot", "stale", "resent_up")


@dataclass(frozen=True)
class IncHeader:
    job: int
    slot: int
    version: int
    is_result: int
    level: int
    ranks: int
    chunk: int
    bitmap: int


def pack(dst_mac: bytes, src_mac: bytes, plane: int, src_id: int, hdr: IncHeader, data: np.ndarray,
         seq: int = 0) -> bytes:
    """One INC frame; `data` is ELEMS int32 values (sent big-endian)."""
    b0 = (_ETHPLUS_VERSION << 6) | (0 << 4) | ((plane & 3) << 2)  # version, pkt_type data, plane, ect 0, ce 0
    hop = 15
    # ETH+ bytes 1..3: hop_limit 4 | dst_id 10 | src_id 10  (dst_id 0: the switch's aggregation service)
    w = (hop << 20) | (0 << 10) | (src_id & 0x3FF)
    head = _HDR.pack(dst_mac, src_mac, ETHERTYPE_INC,
                     b0, (w >> 16) & 0xFF, (w >> 8) & 0xFF, w & 0xFF,
                     hdr.chunk & 0xFFFF, 0, (seq & 0xFFFFFF) << 8,
                     hdr.job, hdr.slot, (hdr.version << 7) | (hdr.is_result << 6), hdr.level, hdr.ranks,
                     hdr.chunk, hdr.bitmap)
    return head + np.asarray(data, dtype=">i4").tobytes()


def parse(frame: bytes) -> tuple[IncHeader, np.ndarray] | None:
    """(header, elements as int32) of an INC frame, or None for anything else (or a truncated frame)."""
    if len(frame) < FRAME_BYTES or frame[12:14] != b"\x88\xb6":
        return None
    f = _HDR.unpack_from(frame)
    flags = f[12]
    hdr = IncHeader(f[10], f[11], flags >> 7, (flags >> 6) & 1, f[13], f[14], f[15], f[16])
    data = np.frombuffer(frame, dtype=">i4", count=ELEMS, offset=HEADER_BYTES).astype(np.int32)
    return hdr, data


def is_inc(frame: bytes) -> bool:
    return frame[12:14] == b"\x88\xb6"
